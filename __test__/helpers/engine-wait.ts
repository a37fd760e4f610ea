// Polls of the engine's own view (raw API, outside berth), for tests that must wait for a
// request to have started or for the engine to settle: never a bare timer.
import { vi } from 'vitest';
import { execIn, inspectContainer } from './engine-http.mjs';

/** One process in a container, as `ps -o pid,stat,args` shows it. */
export interface ContainerProcess {
  pid: number;
  /** `S`, `R`, `Z`, ... (first letter is the state). */
  stat: string;
  args: string;
}

/**
 * The processes running in container `id`, read through a raw exec of busybox `ps` (outside
 * berth), without the `ps` itself.
 */
export async function processesIn(id: string): Promise<ContainerProcess[]> {
  const { exitCode, stdout, stderr } = await execIn(id, ['ps', '-o', 'pid,stat,args']);
  if (exitCode !== 0) throw new Error(`ps in ${id} exited ${exitCode}: ${stderr}`);
  return stdout
    .trim()
    .split('\n')
    .slice(1)
    .map((line) => {
      const [, pid, stat, args] = /^\s*(\d+)\s+(\S+)\s+(.*)$/.exec(line) ?? [];
      return { pid: Number(pid), stat: stat ?? '', args: args ?? '' };
    })
    .filter((p) => p.args !== 'ps -o pid,stat,args');
}

/**
 * Polls container `id` until a process matching `match` runs (a string matches the whole
 * args); resolves to it.
 */
export function waitForProcess(id: string, match: string | ((p: ContainerProcess) => boolean)): Promise<ContainerProcess> {
  const test = typeof match === 'string' ? (p: ContainerProcess) => p.args === match : match;
  return vi.waitFor(
    async () => {
      const found = (await processesIn(id)).find(test);
      if (!found) throw new Error(`no process matching ${String(match)} in ${id} yet`);
      return found;
    },
    { timeout: 30_000, interval: 50 },
  );
}

/** Polls container `id` until no process matches `match` (a string matches the whole args). */
export function waitForNoProcess(id: string, match: string | ((p: ContainerProcess) => boolean)): Promise<void> {
  const test = typeof match === 'string' ? (p: ContainerProcess) => p.args === match : match;
  return vi.waitFor(
    async () => {
      const left = (await processesIn(id)).filter(test);
      if (left.length) throw new Error(`still running in ${id}: ${JSON.stringify(left)}`);
    },
    { timeout: 30_000, interval: 50 },
  );
}

/**
 * Polls container `id` until berth's tree kill of a timed-out or aborted exec has finished:
 * it runs after the call settled (docs/design.md#exec), as its own exec
 * (`sh -c <script> berth-kill <marker>`) that sleeps briefly between TERM and KILL.
 */
export function waitForTreeKill(id: string): Promise<void> {
  return waitForNoProcess(id, (p) => p.args.includes('berth-kill') || p.args === 'sleep 0.2');
}

/** Polls until a container named (or with id) `nameOrId` exists and runs; resolves to its inspect body. */
export function waitForRunningContainer(nameOrId: string): Promise<any> {
  return vi.waitFor(
    async () => {
      const c = await inspectContainer(nameOrId);
      if (!c?.State?.Running) throw new Error(`container ${nameOrId} is not running yet`);
      return c;
    },
    { timeout: 30_000, interval: 50 },
  );
}
