import stringWidth from 'string-width';

/** Characters between columns. */
const GAP = 2;
/** No column shrinks below this many characters (its header, if shorter, still fits). */
const MIN_WIDTH = 8;

/** A column of a {@link renderTable} table. */
export interface Column {
  /** The header (`SESSION`). */
  head: string;
  /** Whether (above 0) and how readily the column gives up width on a narrow terminal. @default 0 (never) */
  shrink?: number;
  /** The column is left out when the table cannot fit otherwise (its facts are elsewhere too). @default false */
  optional?: boolean;
}

/** Printable ASCII only: its width is its length (the fast path of {@link width}). */
const PLAIN = /^[\x20-\x7e]*$/;

/** The printed width of a cell (colour codes not counted, wide characters 2). */
function width(text: string): number {
  return PLAIN.test(text) ? text.length : stringWidth(text);
}

/** What {@link fitWidths} decided: the columns kept (indices, in order) and their widths. */
export interface Fit {
  keep: number[];
  widths: number[];
}

/** Each column's natural width: its widest cell or its header. One pass over the rows. */
function naturalWidths(columns: Column[], rows: string[][]): number[] {
  const natural = columns.map((col) => width(col.head));
  for (const row of rows) {
    for (let i = 0; i < natural.length; i += 1) {
      const w = width(row[i] ?? '');
      if (w > natural[i]!) natural[i] = w;
    }
  }
  return natural;
}

/**
 * Column widths that fit `maxWidth`: each column as wide as its widest cell; when the total is
 * wider, the widest shrinkable column gives up width first (ties: the higher `shrink`), never
 * below {@link MIN_WIDTH} (or its header); when that is not enough, optional columns are left
 * out, highest `shrink` first.
 * Cells cut short end in `…`. A table that cannot fit even so keeps its minimum widths.
 */
export function fitWidths(columns: Column[], rows: string[][], maxWidth: number, natural = naturalWidths(columns, rows)): Fit {
  const total = (keep: number[], ws: number[]): number => keep.reduce((a, i) => a + ws[i]!, 0) + GAP * (keep.length - 1);
  const shrinkOrder = columns
    .map((col, i) => ({ i, shrink: col.shrink ?? 0 }))
    .filter((c) => c.shrink > 0)
    .sort((a, b) => b.shrink - a.shrink)
    .map((c) => c.i);
  // The widest shrinkable column gives up one character at a time, so cuts spread evenly.
  const fit = (keep: number[]): number[] => {
    const widths = [...natural];
    const floor = (i: number): number => Math.max(MIN_WIDTH, width(columns[i]!.head));
    const shrinkable = shrinkOrder.filter((x) => keep.includes(x));
    while (total(keep, widths) > maxWidth) {
      const candidates = shrinkable.filter((i) => widths[i]! > floor(i));
      if (candidates.length === 0) break;
      const widest = candidates.reduce((a, b) => (widths[b]! > widths[a]! ? b : a));
      widths[widest]! -= 1;
    }
    return widths;
  };
  let keep = columns.map((_, i) => i);
  let widths = fit(keep);
  const droppable = shrinkOrder.filter((i) => columns[i]!.optional);
  while (total(keep, widths) > maxWidth && droppable.length) {
    const drop = droppable.shift()!;
    keep = keep.filter((i) => i !== drop);
    widths = fit(keep);
  }
  return { keep, widths: keep.map((i) => widths[i]!) };
}

/** An ANSI SGR escape (`\x1b[31m`) at the start of `s`, or null. */
const SGR = /^\x1b\[[0-9;]*m/;

/**
 * `text` cut to `max` printed columns, ending in `…`, colour codes kept (and reset after the
 * cut when there were any). `text` itself when it fits.
 */
export function cut(text: string, max: number): string {
  if (width(text) <= max) return text;
  if (max <= 0) return '';
  if (PLAIN.test(text)) return `${text.slice(0, max - 1)}…`;
  let out = '';
  let used = 0;
  let coloured = false;
  for (let i = 0; i < text.length; ) {
    const esc = text[i] === '\x1b' ? SGR.exec(text.slice(i)) : null;
    if (esc) {
      out += esc[0];
      coloured = true;
      i += esc[0].length;
      continue;
    }
    const ch = String.fromCodePoint(text.codePointAt(i)!);
    const w = stringWidth(ch);
    if (used + w > max - 1) break;
    out += ch;
    used += w;
    i += ch.length;
  }
  return `${out}…${coloured ? '\x1b[0m' : ''}`;
}

/**
 * `text` at most `max` characters: the head, `…`, then the last `tail` characters (session
 * ids differ at the end as often as at the start). Plain text only (ids, names).
 */
export function shorten(text: string, max: number, tail = 12): string {
  if (text.length <= max) return text;
  const t = Math.min(tail, max - 2);
  return `${text.slice(0, max - 1 - t)}…${text.slice(text.length - t)}`;
}

/**
 * An aligned, borderless table (`docker ps` style): a header row, then one row per entry,
 * columns two spaces apart, no trailing spaces. With `maxWidth` (a terminal's columns) wide
 * cells are cut short, and optional columns left out, so that every line fits. A column is as
 * wide as its widest cell (shorten long values before, see {@link shorten}).
 *
 * Linear in the cells: one pass to measure, one to write (10,000 rows in tens of milliseconds).
 */
export function renderTable(columns: Column[], rows: string[][], { maxWidth = Infinity, bold = (s: string) => s } = {}): string {
  const natural = naturalWidths(columns, rows);
  const { keep, widths } = fitWidths(columns, rows, maxWidth, natural);
  const last = keep.length - 1;
  const line = (cells: string[], style: (s: string) => string): string => {
    let out = '';
    for (let k = 0; k <= last; k += 1) {
      const w = widths[k]!;
      const cell = cut(cells[keep[k]!] ?? '', w);
      if (k === last) {
        out += style(cell);
      } else {
        out += style(cell) + ' '.repeat(w - width(cell) + GAP);
      }
    }
    return out.replace(/ +$/, '');
  };
  const lines = [line(columns.map((c) => c.head), bold)];
  for (const row of rows) lines.push(line(row, (s) => s));
  return lines.join('\n');
}

/** Two aligned columns, `key  value`, one pair a line (for `peek` and `engine`). */
export function renderPairs(pairs: [string, string][], { bold = (s: string) => s } = {}): string {
  const keyWidth = Math.max(...pairs.map(([k]) => width(k)));
  return pairs.map(([k, v]) => `${bold(k)}${' '.repeat(keyWidth - width(k) + GAP)}${v}`).join('\n');
}
