// A Node process that used berth exits on its own: nothing native (runtime threads, engine
// connections, pending promises, abort listeners) keeps its event loop alive. Each script runs
// in a fresh `node` and must exit 0 by itself; the kill timer only stops a hung run.
import { fileURLToPath } from 'node:url';
import { expect } from 'vitest';
import { resumeSession } from '../../index.mjs';
import { inspectContainer } from '../helpers/engine-http.mjs';
import { sessionTest as test } from '../helpers/fixtures.js';
import { lastJsonLine, runNode, type NodeRun } from '../helpers/node-process.js';
import { TEST_IMAGE } from '../helpers/test-image.mjs';
import { engineSuite } from '../helpers/suite.js';

const ROOT = fileURLToPath(new URL('../../index.mjs', import.meta.url));
/** Generous: a run that has not exited by then is hung, not slow. */
const KILL_AFTER_MS = 60_000;

/** Runs an ES module `source` in a fresh node, with the package root in `$BERTH_ROOT`. */
function runModule(source: string, env: Record<string, string>): Promise<NodeRun> {
  return runNode(['--input-type=module', '-e', source], { ...env, BERTH_ROOT: ROOT }, KILL_AFTER_MS);
}

engineSuite('process exit', { timeout: KILL_AFTER_MS + 30_000 }, () => {

  test('after create, exec, hostAddress and remove', async ({ sessionId, labels }) => {
    const run = await runModule(
      `
      const berth = await import(process.env.BERTH_ROOT);
      const s = await berth.createSession({
        sessionId: process.env.SID, image: process.env.IMAGE, labels: JSON.parse(process.env.LABELS), ports: [8080],
      });
      const out = await s.exec(['cat'], { stdin: 'through stdin' });
      const address = await s.hostAddress(8080);
      const peeked = await berth.peek(process.env.SID);
      const removed = await s.remove();
      console.log(JSON.stringify({ id: s.id, stdout: out.stdout.toString(), address, state: peeked.state, removed }));
      `,
      { SID: sessionId, IMAGE: TEST_IMAGE, LABELS: JSON.stringify(labels) },
    );
    expect(run, run.stderr).toMatchObject({ code: 0, signal: null, killed: false });
    const r = lastJsonLine(run);
    expect(r).toMatchObject({ stdout: 'through stdin', state: 'running', removed: { removed: true } });
    expect(r.address).toMatch(/^127\.0\.0\.1:\d+$/);
    expect(await inspectContainer(r.id)).toBeNull();
  });

  test('after error paths: exec timeout, abort, not found, unreachable engine, invalid argument', async ({ sessionId, labels }) => {
    const run = await runModule(
      `
      const berth = await import(process.env.BERTH_ROOT);
      const codes = [];
      const note = (p) => p.then(() => codes.push('resolved'), (e) => codes.push(e.code));
      const s = await berth.createSession({ sessionId: process.env.SID, image: process.env.IMAGE, labels: JSON.parse(process.env.LABELS) });
      await note(s.exec(['sleep', '1000'], { timeoutMs: 300 }));
      const controller = new AbortController();
      const running = note(s.exec(['sleep', '1001'], { abortSignal: controller.signal }));
      // Abort once the process runs (polled in the container, not timed).
      while ((await s.exec(['sh', '-c', 'ps -o args | grep -qx "sleep 1001"'])).exitCode !== 0);
      controller.abort();
      await running;
      await note(berth.resumeSession({ sessionId: process.env.SID + '-absent' }));
      await note(berth.peek('x', { socketPath: '/nonexistent.sock' }));
      await note(berth.createSession({ sessionId: '', image: 'x' }));
      await note(s.remove());
      console.log(JSON.stringify({ codes }));
      `,
      { SID: sessionId, IMAGE: TEST_IMAGE, LABELS: JSON.stringify(labels) },
    );
    expect(run, run.stderr).toMatchObject({ code: 0, signal: null, killed: false });
    expect(lastJsonLine(run).codes).toEqual([
      'E_EXEC_TIMEOUT',
      'E_ABORTED',
      'E_SESSION_NOT_FOUND',
      'E_ENGINE_UNAVAILABLE',
      'E_INVALID_ARGUMENT',
      'resolved',
    ]);
  });

  test('while still holding a live session it never removed (the container stays)', async ({ sessionId, labels }) => {
    const run = await runModule(
      `
      const berth = await import(process.env.BERTH_ROOT);
      const s = await berth.createSession({ sessionId: process.env.SID, image: process.env.IMAGE, labels: JSON.parse(process.env.LABELS) });
      await s.exec(['true']);
      globalThis.kept = s;
      console.log(JSON.stringify({ id: s.id }));
      `,
      { SID: sessionId, IMAGE: TEST_IMAGE, LABELS: JSON.stringify(labels) },
    );
    expect(run, run.stderr).toMatchObject({ code: 0, signal: null, killed: false });
    const { id } = lastJsonLine(run);
    const left = await resumeSession({ sessionId });
    try {
      expect(left.id).toBe(id);
      expect(left.owner?.liveness).toBe('dead');
      expect((await inspectContainer(id))?.State.Running).toBe(true);
    } finally {
      await left.remove({ force: true });
    }
  });
});
