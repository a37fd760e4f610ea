import type { Command } from 'commander';
import type { EngineName, EngineOptions } from '../index';
import { colourEnabled, colours } from './colour';
import { processOutput, type Output } from './output';

/** The global options every command takes (see `program.ts`). */
export interface GlobalOptions {
  engine?: EngineName;
  socket?: string;
  json?: boolean;
  /** False with `--no-color`. */
  color: boolean;
}

/** What a command runs with: engine selection, output mode, streams. */
export interface Context {
  /** `engine` / `socketPath` for every berth call. */
  engine: EngineOptions;
  /** `--json`: one JSON document on stdout, nothing else there. */
  json: boolean;
  out: Output;
  /** stdout is a terminal (tables fit its width; `reap` asks before removing). */
  interactive: boolean;
  /** The terminal's width, or Infinity when stdout is not a terminal. */
  columns: number;
  /**
   * stderr and stdout are terminals, stderr's terminal has a width (a pty with no window size
   * reports 0 columns), `--json` is off, `TERM` is not `dumb` and no `CI` variable is set:
   * progress may be drawn. (The spinner library draws a new line per frame, which it cannot
   * clear, when `CI` is set; on 0 columns its line count is infinite and clearing never ends.)
   */
  progress: boolean;
}

/** The context of `command` from its own and the global options. */
export function contextOf(command: Command): Context {
  const g = command.optsWithGlobals<GlobalOptions>();
  const json = g.json === true;
  const out = processOutput(
    colours(colourEnabled(process.stdout, { flag: g.color, json })),
    colours(colourEnabled(process.stderr, { flag: g.color, json: false })),
  );
  const interactive = process.stdout.isTTY === true;
  return {
    engine: { ...(g.engine ? { engine: g.engine } : {}), ...(g.socket ? { socketPath: g.socket } : {}) },
    json,
    out,
    interactive,
    columns: interactive && process.stdout.columns ? process.stdout.columns : Infinity,
    progress:
      !json &&
      interactive &&
      process.stderr.isTTY === true &&
      (process.stderr.columns ?? 0) > 0 &&
      process.env.TERM !== 'dumb' &&
      !('CI' in process.env),
  };
}
