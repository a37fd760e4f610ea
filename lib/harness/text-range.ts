import { invalid } from '../validate';

/**
 * Lines `startLine` to `endLine` of `text`, exactly as the AI SDK's own helper
 * (`extractLines` in `@ai-sdk/provider-utils`) cuts them, so a harness reading a range through
 * berth gets what it would get from any other sandbox:
 *
 * - 1-based and inclusive; a `startLine` below 1 counts as 1; an `endLine` past the last line
 *   stops at the end of the text; an `endLine` before `startLine` gives `''`.
 * - The text's line break is detected once (`\r\n` if it has one, else `\n`, else `\r`), the
 *   lines are joined with it, and the last line of the range has **no** trailing line break
 *   (`'a\nb\nc\n'`, lines 2 to 3: `'b\nc'`).
 * - Neither bound given: the whole text, unchanged.
 *
 * @throws InvalidArgumentError `E_INVALID_ARGUMENT` when a bound is given but is not a safe
 *   integer (`NaN`, `1.5`, a string...).
 */
export function sliceLines(text: string, startLine?: number, endLine?: number): string {
  checkLineRange(startLine, endLine);
  if (startLine == null && endLine == null) return text;
  const lineEnding = text.includes('\r\n') ? '\r\n' : text.includes('\n') ? '\n' : text.includes('\r') ? '\r' : '\n';
  const lines = text.split(lineEnding);
  const start = Math.max(1, startLine ?? 1) - 1;
  const end = Math.min(lines.length, endLine ?? lines.length);
  return lines.slice(start, end).join(lineEnding);
}

/**
 * Checks `startLine`/`endLine` as {@link sliceLines} takes them (each absent, or a safe
 * integer), so that a bad bound is refused before the file is read.
 *
 * @throws InvalidArgumentError `E_INVALID_ARGUMENT` naming the bound.
 */
export function checkLineRange(startLine: unknown, endLine: unknown): void {
  for (const [name, value] of [['startLine', startLine], ['endLine', endLine]] as const) {
    if (value !== undefined && value !== null && !Number.isSafeInteger(value)) {
      invalid(name, `expected an integer line number, got ${typeof value === 'number' ? String(value) : typeof value}`);
    }
  }
}
