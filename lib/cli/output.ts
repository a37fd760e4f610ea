import type { Colours } from './colour';

/** Where a command writes: results to stdout, notes and errors to stderr. */
export interface Output {
  /** One line of results (stdout). */
  line(text?: string): void;
  /** One line of notes or errors (stderr). */
  note(text: string): void;
  /** One JSON document on one line (stdout). */
  json(value: unknown): void;
  /** Colours for stdout. */
  c: Colours;
  /** Colours for stderr. */
  ce: Colours;
}

/** The process's own streams. */
export function processOutput(c: Colours, ce: Colours): Output {
  return {
    line: (text = '') => void process.stdout.write(`${text}\n`),
    note: (text) => void process.stderr.write(`${text}\n`),
    json: (value) => void process.stdout.write(`${JSON.stringify(value)}\n`),
    c,
    ce,
  };
}
