import Table from 'cli-table3';
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

/** The printed width of a cell as cli-table3 measures it (colour codes not counted, wide characters 2). */
function width(text: string): number {
  return stringWidth(text);
}

/** What {@link fitWidths} decided: the columns kept (indices, in order) and their widths. */
export interface Fit {
  keep: number[];
  widths: number[];
}

/**
 * Column widths that fit `maxWidth`: each column as wide as its widest cell; when the total is
 * wider, the widest shrinkable column gives up width first (ties: the higher `shrink`), never
 * below {@link MIN_WIDTH} (or its header); when that is not enough, optional columns are left
 * out, highest `shrink` first.
 * Cells cut short end in `…`. A table that cannot fit even so keeps its minimum widths.
 */
export function fitWidths(columns: Column[], rows: string[][], maxWidth: number): Fit {
  const natural = columns.map((col, i) => Math.max(width(col.head), ...rows.map((r) => width(r[i] ?? ''))));
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

/**
 * An aligned, borderless table (`docker ps` style): a header row, then one row per entry,
 * columns two spaces apart, no trailing spaces. With `maxWidth` (a terminal's columns) wide
 * cells are cut short, and optional columns left out, so that every line fits.
 */
export function renderTable(columns: Column[], rows: string[][], { maxWidth = Infinity, bold = (s: string) => s } = {}): string {
  const { keep, widths } = fitWidths(columns, rows, maxWidth);
  const table = new Table({
    head: keep.map((i) => bold(columns[i]!.head)),
    // The gap is each cell's right padding, so a cell cut short keeps it.
    colWidths: widths.map((w) => w + GAP),
    chars: {
      top: '', 'top-mid': '', 'top-left': '', 'top-right': '',
      bottom: '', 'bottom-mid': '', 'bottom-left': '', 'bottom-right': '',
      left: '', 'left-mid': '', mid: '', 'mid-mid': '', right: '', 'right-mid': '', middle: '',
    },
    style: { head: [], border: [], 'padding-left': 0, 'padding-right': GAP, compact: true },
    truncate: '…',
    wordWrap: false,
  });
  for (const row of rows) table.push(keep.map((i) => row[i] ?? ''));
  return table
    .toString()
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => line.replace(/\s+$/, ''))
    .join('\n');
}

/** Two aligned columns, `key  value`, one pair a line (for `peek` and `engine`). */
export function renderPairs(pairs: [string, string][], { bold = (s: string) => s } = {}): string {
  const keyWidth = Math.max(...pairs.map(([k]) => width(k)));
  return pairs.map(([k, v]) => `${bold(k)}${' '.repeat(keyWidth - width(k) + GAP)}${v}`).join('\n');
}
