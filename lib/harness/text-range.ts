/**
 * Lines `startLine` to `endLine` (1-based, inclusive) of `text`. An `endLine` past the last
 * line returns through the end of the text without error; a `startLine` past it returns `''`.
 * Line breaks (`\n`, with `\r\n` kept as is) are preserved inside the range.
 *
 * @throws RangeError when a bound is not a positive integer, or `endLine < startLine`.
 */
export function sliceLines(text: string, startLine?: number, endLine?: number): string {
  if (startLine === undefined && endLine === undefined) return text;
  const start = startLine ?? 1;
  for (const [name, value] of [['startLine', start], ['endLine', endLine]] as const) {
    if (value !== undefined && (!Number.isSafeInteger(value) || value < 1)) {
      throw new RangeError(`readTextFile: ${name} must be a positive integer, got ${String(value)}`);
    }
  }
  if (endLine !== undefined && endLine < start) {
    throw new RangeError(`readTextFile: endLine (${endLine}) is before startLine (${start})`);
  }
  // Offsets of each line's first character.
  let offset = 0;
  for (let line = 1; line < start; line++) {
    const next = text.indexOf('\n', offset);
    if (next === -1) return '';
    offset = next + 1;
  }
  if (endLine === undefined) return text.slice(offset);
  let end = offset;
  for (let line = start; line <= endLine; line++) {
    const next = text.indexOf('\n', end);
    if (next === -1) return text.slice(offset);
    end = next + 1;
  }
  return text.slice(offset, end);
}
