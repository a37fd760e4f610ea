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

/** `…`, which ends a cell cut short: one column wide (as `string-width` counts it). */
const ELLIPSIS = 0x2026;

/** Printable ASCII only: its width is its length (the fast path of {@link width}). */
const PLAIN = /^[\x20-\x7e]*$/;

/**
 * The printed width of a cell (colour codes not counted, wide characters 2). Printable ASCII
 * and SGR colour codes (`\x1b[31m`) are counted here in one pass; anything else goes to
 * `string-width` (whose general path costs about ten times as much: most of a coloured
 * 10,000-row table's time when every cell went there).
 */
function width(text: string): number {
  if (PLAIN.test(text)) return text.length;
  let w = 0;
  for (let i = 0; i < text.length; i += 1) {
    const ch = text.charCodeAt(i);
    if ((ch >= 0x20 && ch <= 0x7e) || ch === ELLIPSIS) {
      w += 1;
    } else if (ch === 0x1b && text.charCodeAt(i + 1) === 0x5b) {
      // `ESC [` digits and `;`, then `m`: an SGR sequence, no width.
      let j = i + 2;
      while (j < text.length && ((text.charCodeAt(j) >= 0x30 && text.charCodeAt(j) <= 0x39) || text.charCodeAt(j) === 0x3b)) j += 1;
      if (text.charCodeAt(j) !== 0x6d) return stringWidth(text);
      i = j;
    } else {
      return stringWidth(text);
    }
  }
  return w;
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
    const code = text.codePointAt(i)!;
    const ch = String.fromCodePoint(code);
    const w = code >= 0x20 && code <= 0x7e ? 1 : stringWidth(ch);
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
 * Linear in the cells: one pass measures each cell once, one writes (see `__test__/cli/cli-format.test.ts`
 * and the bench's `ls` figures for 10,000 rows).
 */
export function renderTable(columns: Column[], rows: string[][], { maxWidth = Infinity, bold = (s: string) => s } = {}): string {
  // Every cell measured once, here: a cell that fits (nearly all) is neither measured again nor cut.
  const n = columns.length;
  const cellWidths = new Int32Array(rows.length * n);
  const natural = columns.map((col) => width(col.head));
  rows.forEach((row, r) => {
    for (let i = 0; i < n; i += 1) {
      const w = width(row[i] ?? '');
      cellWidths[r * n + i] = w;
      if (w > natural[i]!) natural[i] = w;
    }
  });
  const { keep, widths } = fitWidths(columns, rows, maxWidth, natural);
  const last = keep.length - 1;
  const line = (cells: string[], style: (s: string) => string, measured: (i: number) => number): string => {
    let out = '';
    let pad = 0;
    let lastCell = '';
    for (let k = 0; k <= last; k += 1) {
      const w = widths[k]!;
      const text = cells[keep[k]!] ?? '';
      const tw = measured(keep[k]!);
      const cell = tw <= w ? text : cut(text, w);
      const styled = style(cell);
      if (styled === '') {
        pad += w + GAP;
        continue;
      }
      // Padding goes in only before a cell that follows it: no trailing spaces to strip.
      if (pad > 0) out += spaces(pad);
      out += styled;
      lastCell = cell;
      pad = w - (tw <= w ? tw : width(cell)) + GAP;
    }
    // Only a cell's own trailing spaces are left to strip: looked for in that (short) cell, so
    // the line, a chain of concatenations, is not flattened here but once, by the join.
    return lastCell.endsWith(' ') ? trimSpaces(out) : out;
  };
  const plain = (s: string): string => s;
  const lines = [line(columns.map((c) => c.head), bold, (i) => width(columns[i]!.head))];
  rows.forEach((row, r) => lines.push(line(row, plain, (i) => cellWidths[r * n + i]!)));
  return lines.join('\n');
}

/** `n` spaces, from one shared string when it is long enough. */
const SPACE_RUN = ' '.repeat(256);
function spaces(n: number): string {
  return n <= SPACE_RUN.length ? SPACE_RUN.slice(0, n) : ' '.repeat(n);
}

/**
 * `text` without its trailing spaces (a cell's own). A loop, not `/ +$/`: V8 runs that pattern
 * from every space of a line (quadratic in a run of spaces), the slowest step of a 10,000-row table.
 */
function trimSpaces(text: string): string {
  let end = text.length;
  while (end > 0 && text.charCodeAt(end - 1) === 32) end -= 1;
  return end === text.length ? text : text.slice(0, end);
}

/** Two aligned columns, `key  value`, one pair a line (for `peek` and `engine`). */
export function renderPairs(pairs: [string, string][], { bold = (s: string) => s } = {}): string {
  const keyWidth = Math.max(...pairs.map(([k]) => width(k)));
  return pairs.map(([k, v]) => `${bold(k)}${' '.repeat(keyWidth - width(k) + GAP)}${v}`).join('\n');
}
