import pc from 'picocolors';

/** The colour functions a command writes with: real ones, or identity functions. */
export type Colours = ReturnType<typeof pc.createColors>;

/**
 * Whether to colour what goes to `stream`: never with `--no-color` or a non-empty `NO_COLOR`
 * (https://no-color.org), never for `--json`; otherwise only when `stream` is a terminal
 * (`TERM=dumb` excepted).
 */
export function colourEnabled(stream: NodeJS.WriteStream, { flag, json }: { flag: boolean; json: boolean }): boolean {
  if (!flag || json) return false;
  if (process.env.NO_COLOR) return false;
  return stream.isTTY === true && process.env.TERM !== 'dumb';
}

/** Colour functions for `enabled`. */
export function colours(enabled: boolean): Colours {
  return pc.createColors(enabled);
}
