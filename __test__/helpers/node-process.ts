import { spawn } from 'node:child_process';

/** How a `node` run ended, with its output. */
export interface NodeRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** True when it was still running after `killAfterMs` and was SIGKILLed. */
  killed: boolean;
  stdout: string;
  stderr: string;
}

/**
 * Runs `node <args>` in a fresh process (inheriting this environment plus `env`) and resolves
 * once it exited and its pipes drained. SIGKILLs it after `killAfterMs`: a bound for a hung
 * run, not a timing assertion.
 */
export function runNode(args: string[], env: Record<string, string>, killAfterMs: number): Promise<NodeRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk));
    let killed = false;
    const timer = setTimeout(() => {
      killed = true;
      child.kill('SIGKILL');
    }, killAfterMs);
    child.on('error', reject);
    // 'close': the process exited and its pipes drained.
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, killed, stdout, stderr });
    });
  });
}

/** The last line of a run's stdout, parsed as JSON (what the script reports). */
export function lastJsonLine(run: NodeRun): any {
  return JSON.parse(run.stdout.trim().split('\n').at(-1) ?? 'null');
}
