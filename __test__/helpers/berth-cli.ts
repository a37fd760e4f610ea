// The built `berth` command (dist/cli/main.js, the package's "bin") run as a child process,
// as a user runs it: `runBerth` for a command that ends, `startBerth` for one that keeps
// running (`reap --watch`) and is stopped with a signal.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { runNode, type NodeRun } from './node-process.js';

/** The bin's path. */
export const BERTH_BIN = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));
/** A bound for a hung command, not a timing assertion. */
const KILL_AFTER_MS = 120_000;

/** Runs `berth <args>` to its end. `env` adds to (or, with `undefined` values, drops from) this process's environment. */
export function runBerth(args: string[], env: Record<string, string | undefined> = {}): Promise<NodeRun> {
  const { drop, add } = splitEnv(env);
  const saved = drop.map((k) => [k, process.env[k]] as const);
  for (const k of drop) delete process.env[k];
  try {
    return runNode([BERTH_BIN, ...args], add, KILL_AFTER_MS);
  } finally {
    for (const [k, v] of saved) if (v !== undefined) process.env[k] = v;
  }
}

/** A `berth` process still running. */
export interface RunningBerth {
  readonly pid: number;
  /** Everything it wrote to stdout so far. */
  stdout(): string;
  stderr(): string;
  /** Resolves once stdout has a line for which `match` is true (its text), or rejects after `timeoutMs`. */
  waitForLine(match: (line: string) => boolean, timeoutMs?: number): Promise<string>;
  /** Sends `signal` and resolves how it ended. */
  stop(signal: NodeJS.Signals): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Starts `berth <args>` and returns at once. */
export function startBerth(args: string[], env: Record<string, string> = {}): RunningBerth {
  const child = spawn(process.execPath, [BERTH_BIN, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  const listeners = new Set<() => void>();
  child.stdout.on('data', (chunk: Buffer) => {
    out += chunk;
    for (const l of listeners) l();
  });
  child.stderr.on('data', (chunk: Buffer) => (err += chunk));
  const ended = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('close', (code, signal) => resolve({ code, signal })),
  );
  const timer = setTimeout(() => child.kill('SIGKILL'), KILL_AFTER_MS);
  void ended.then(() => clearTimeout(timer));
  return {
    pid: child.pid!,
    stdout: () => out,
    stderr: () => err,
    waitForLine: (match, timeoutMs = 60_000) =>
      new Promise((resolve, reject) => {
        const check = (): void => {
          const line = out.split('\n').find((l) => l.trim() !== '' && match(l));
          if (line === undefined) return;
          cleanup();
          resolve(line);
        };
        const give = setTimeout(() => {
          cleanup();
          reject(new Error(`no matching line within ${timeoutMs} ms; stdout: ${out}\nstderr: ${err}`));
        }, timeoutMs);
        const cleanup = (): void => {
          clearTimeout(give);
          listeners.delete(check);
        };
        listeners.add(check);
        void ended.then(() => {
          check();
          if (listeners.has(check)) {
            cleanup();
            reject(new Error(`berth exited before a matching line; stdout: ${out}\nstderr: ${err}`));
          }
        });
        check();
      }),
    stop: (signal) => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return ended;
    },
  };
}

function splitEnv(env: Record<string, string | undefined>): { drop: string[]; add: Record<string, string> } {
  const drop = Object.keys(env).filter((k) => env[k] === undefined);
  const add = Object.fromEntries(Object.entries(env).filter((e): e is [string, string] => e[1] !== undefined));
  return { drop, add };
}
