// A second dockerd for tests that stop and start an engine: its own socket, data root, exec
// root and pid file under /tmp/berth-dockerd2-<run>, in its own network namespace with no
// bridge and no iptables rules, so the main engine (which other suites use) is never touched.
// Needs root, `dockerd` and `unshare` on PATH.
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, openSync, readFileSync, rmSync } from 'node:fs';
import { ping } from './engine-http.mjs';
import { runId } from './run-label.mjs';
import { ensureTestImage } from './test-image.mjs';

const START_TIMEOUT_MS = 60_000;
const POLL_MS = 200;

/** Why the second engine cannot run here, or null when it can. */
export function secondEngineUnavailable() {
  if (process.getuid?.() !== 0) return 'a second dockerd needs root';
  if (spawnSync('dockerd', ['--version'], { stdio: 'ignore' }).status !== 0) return 'dockerd is not on PATH';
  if (spawnSync('unshare', ['--version'], { stdio: 'ignore' }).status !== 0) return 'unshare (util-linux) is not on PATH';
  return null;
}

/**
 * The second engine's paths; nothing is started.
 * @returns {{ dir: string, socketPath: string, pidFile: string, start: () => Promise<void>, stop: () => Promise<void>, destroy: () => Promise<void> }}
 */
export function secondEngine() {
  const dir = `/tmp/berth-dockerd2-${runId()}`;
  const socketPath = `${dir}/docker.sock`;
  const pidFile = `${dir}/docker.pid`;
  /** @type {import('node:child_process').ChildProcess | undefined} */
  let proc;

  const waitFor = async (/** @type {() => Promise<boolean>} */ done, /** @type {string} */ what) => {
    const deadline = Date.now() + START_TIMEOUT_MS;
    while (!(await done())) {
      if (Date.now() > deadline) throw new Error(`second dockerd: ${what} within ${START_TIMEOUT_MS} ms (log: ${dir}/dockerd.log)`);
      await new Promise((r) => setTimeout(r, POLL_MS));
    }
  };

  return {
    dir,
    socketPath,
    pidFile,
    /** Starts dockerd (unless this helper's one runs) and waits until `GET /_ping` answers; imports the test image into it. */
    async start() {
      if (proc && proc.exitCode === null && proc.signalCode === null) return;
      mkdirSync(dir, { recursive: true });
      const log = openSync(`${dir}/dockerd.log`, 'a');
      // Its own network namespace: a dockerd with `--bridge=none` deletes any `docker0` it
      // sees at start-up, which on the host would be the main engine's bridge.
      proc = spawn(
        'unshare',
        [
          '--net',
          '--',
          'dockerd',
          `--host=unix://${socketPath}`,
          `--data-root=${dir}/data`,
          `--exec-root=${dir}/exec`,
          `--pidfile=${pidFile}`,
          '--bridge=none',
          '--iptables=false',
          '--ip-masq=false',
        ],
        { stdio: ['ignore', log, log], detached: false },
      );
      await waitFor(() => ping({ socketPath }), 'no answer on its socket');
      await ensureTestImage({ socketPath });
    },
    /** SIGTERMs this dockerd (by the pid it was started with) and waits until it exited. */
    async stop() {
      if (!proc || proc.exitCode !== null || proc.signalCode !== null) return;
      const exited = new Promise((resolve) => proc?.once('exit', resolve));
      proc.kill('SIGTERM');
      await exited;
    },
    /** Stops it, unmounts what it left mounted under its directory (dockerd bind-mounts its data root), deletes the directory. */
    async destroy() {
      await this.stop();
      const mounts = readFileSync('/proc/self/mounts', 'utf8')
        .split('\n')
        .map((line) => line.split(' ')[1] ?? '')
        .filter((mountPoint) => mountPoint === dir || mountPoint.startsWith(`${dir}/`))
        .sort((a, b) => b.length - a.length);
      for (const mountPoint of mounts) {
        const res = spawnSync('umount', [mountPoint], { encoding: 'utf8' });
        if (res.status !== 0) throw new Error(`umount ${mountPoint}: ${res.stderr}`);
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
