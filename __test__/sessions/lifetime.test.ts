// removeAfterStopMs on the root API: validated before any engine call, fixed in a label,
// enforced by the owning process after its own stop() and by any process's reapOrphans
// (reason 'expired'), whatever the owner's liveness; listSessions only shows it. Plus the
// harness provider's contract details: an aborted spawn rejects with the caller's reason; IS_SANDBOX=1.
import { afterAll, beforeAll, expect, vi } from 'vitest';
import { reapOrphans, resumeSession } from '../../index.mjs';
import { lastJsonLine, runNode } from '../helpers/node-process.js';
import { createDockerSandboxProvider } from '../../harness.mjs';
import { createSession, InvalidArgumentError, MAX_REMOVE_AFTER_STOP_MS } from '../../index.mjs';
import { startChild } from '../helpers/child.js';
import { inspectContainer, stopContainer } from '../helpers/engine-http.mjs';
import { startEngineProxy } from '../helpers/engine-proxy.mjs';
import { expectBerthError } from '../helpers/expect-error.js';
import { sessionTest as test } from '../helpers/fixtures.js';
import { recordsOf } from '../helpers/records.mjs';
import { testLabels, testSessionId } from '../helpers/run-label.mjs';
import { TEST_IMAGE } from '../helpers/test-image.mjs';
import { engineSuite } from '../helpers/suite.js';

type Proxy = Awaited<ReturnType<typeof startEngineProxy>>;
let proxy: Proxy;

/** Polls `check` until true, for at most `withinMs` (a bound for a hung run, not a timing assertion). */
async function eventually(check: () => Promise<boolean>, withinMs: number): Promise<boolean> {
  const until = Date.now() + withinMs;
  for (;;) {
    if (await check()) return true;
    if (Date.now() > until) return false;
    await new Promise((r) => setTimeout(r, 200));
  }
}

engineSuite('removeAfterStopMs', () => {
  beforeAll(async () => {
    proxy = await startEngineProxy();
  });
  afterAll(async () => {
    await proxy?.close();
  });

  test('bad values are E_INVALID_ARGUMENT before any engine call', async ({ sessionId, labels }) => {
    for (const bad of [-1, 1.5, Number.NaN, MAX_REMOVE_AFTER_STOP_MS + 1, '1000', Number.POSITIVE_INFINITY]) {
      const attempt = await proxy.during(() =>
        expectBerthError(
          createSession({ socketPath: proxy.socketPath, sessionId, image: TEST_IMAGE, labels, removeAfterStopMs: bad as number }),
          InvalidArgumentError,
        ),
      );
      expect(attempt.value.details).toMatchObject({ field: 'removeAfterStopMs' });
      expect(attempt.requests).toEqual([]);
    }
    expect(() => createDockerSandboxProvider({ image: TEST_IMAGE, removeAfterStopMs: -5 })).toThrow(
      expect.objectContaining({ code: 'E_INVALID_ARGUMENT' }),
    );
  });

  test('the retention is a label; a stopped session of a live owner is removed by its own timer', async ({ sessionId, labels }) => {
    const session = await createSession({ sessionId, image: TEST_IMAGE, labels, removeAfterStopMs: 1_000 });
    const inspected = await inspectContainer(session.id);
    expect(inspected?.Config.Labels['dev.berth.remove-after-stop-ms']).toBe('1000');
    await expect(session.stop({ timeoutMs: 0 })).resolves.toEqual({ stopped: true });
    // The container goes first, its record volumes right after it.
    // Podman 4.3 can answer an inspect during the removal with HTTP 500 "no such container": not yet.
    const gone = async () =>
      (await inspectContainer(session.id).catch(() => undefined)) === null && (await recordsOf(session.id)).length === 0;
    expect(await eventually(gone, 20_000)).toBe(true);
    await expect(session.remove()).resolves.toEqual({ removed: false, reason: 'already-removed' });
  });

  test('started again before the retention ends: the timer leaves it alone', async ({ sessionId, labels }) => {
    const { resumeSession } = await import('../../index.mjs');
    const session = await createSession({ sessionId, image: TEST_IMAGE, labels, removeAfterStopMs: 1_500 });
    await session.stop({ timeoutMs: 0 });
    const resumed = await resumeSession({ sessionId });
    await new Promise((r) => setTimeout(r, 3_000));
    expect((await inspectContainer(session.id))?.State.Running).toBe(true);
    await expect(resumed.remove()).resolves.toEqual({ removed: true });
  });

  test("reapOrphans in another process removes an expired session of a live owner, reason 'expired'", async ({ sessionId, labels }) => {
    const session = await createSession({ sessionId, image: TEST_IMAGE, labels, removeAfterStopMs: 500 });
    // Stopped behind berth's back: no owner timer is armed, only the expiry rule is left.
    await stopContainer(session.id);
    const other = await startChild();
    try {
      await new Promise((r) => setTimeout(r, 1_000));
      const dryAfter = await other.call('reapOrphans', { labels, dryRun: true });
      expect(dryAfter.removed).toEqual([expect.objectContaining({ id: session.id, reason: 'expired' })]);
      expect(await inspectContainer(session.id)).not.toBeNull();
      const report = await other.call('reapOrphans', { labels });
      expect(report.removed).toEqual([expect.objectContaining({ id: session.id, sessionId, reason: 'expired' })]);
    } finally {
      await other.kill();
    }
    expect(await inspectContainer(session.id)).toBeNull();
    expect(await recordsOf(session.id)).toEqual([]);
  });

  test('the armed timer never keeps Node alive: a process that stopped its session exits at once', async ({ sessionId, labels }) => {
    const entry = new URL('../../index.mjs', import.meta.url).href;
    const script = `
      import { createSession } from ${JSON.stringify(entry)};
      const s = await createSession({ sessionId: ${JSON.stringify(sessionId)}, image: ${JSON.stringify(TEST_IMAGE)},
        labels: ${JSON.stringify(labels)}, removeAfterStopMs: 600000 });
      await s.stop({ timeoutMs: 0 });
      console.log(JSON.stringify({ id: s.id }));
    `;
    // Killed after 60 s: a bound for a hung run. A ref'd 10-minute timer would hit it.
    const run = await runNode(['--input-type=module', '-e', script], {}, 60_000);
    expect(run.killed, run.stderr).toBe(false);
    expect(run.code, run.stderr).toBe(0);
    const { id } = lastJsonLine(run);
    // Its owner is dead now, its retention runs: the reaper keeps it, parked (docs/design.md
    // "Parked sessions and handover"), until it expires; then it is removed here by hand.
    const report = await reapOrphans({ labels });
    expect(report.kept).toEqual([expect.objectContaining({ id, reason: 'parked' })]);
    expect(report.removed).toEqual([]);
    const taken = await resumeSession({ sessionId, takeOver: true });
    await taken.remove();
  });

  test('listSessions lists an expired session as it is (expiresAt in the past) and removes nothing; reapOrphans removes it', async ({ sessionId, labels }) => {
    const { listSessions } = await import('../../index.mjs');
    const session = await createSession({ sessionId, image: TEST_IMAGE, labels, removeAfterStopMs: 0 });
    await stopContainer(session.id);
    const [listed, ...more] = await listSessions({ labels });
    expect(more).toEqual([]);
    expect(listed).toMatchObject({ id: session.id, state: 'exited' });
    expect(listed!.expiresAt).toBeLessThanOrEqual(Date.now());
    expect(await inspectContainer(session.id)).not.toBeNull();
    const report = await reapOrphans({ labels });
    expect(report.removed).toEqual([expect.objectContaining({ id: session.id, reason: 'expired' })]);
    expect(await inspectContainer(session.id)).toBeNull();
    await expect(session.remove()).resolves.toEqual({ removed: false, reason: 'already-removed' });
  });
});

engineSuite('harness provider contract details', () => {

  test('IS_SANDBOX=1 by default; an explicit env.IS_SANDBOX wins', async () => {
    for (const [env, expected] of [
      [undefined, '1'],
      [{ IS_SANDBOX: '0' }, '0'],
    ] as const) {
      const provider = createDockerSandboxProvider({ image: TEST_IMAGE, labels: testLabels(), ...(env ? { env } : {}) });
      const session = await provider.createSession({ sessionId: testSessionId('env') });
      try {
        const { stdout } = await session.run({ command: 'printf %s "$IS_SANDBOX"' });
        expect(stdout).toBe(expected);
      } finally {
        await session.destroy();
      }
    }
  });

  test('readTextFile: a bad line bound or encoding is E_INVALID_ARGUMENT, the range cut as extractLines', async () => {
    const provider = createDockerSandboxProvider({ image: TEST_IMAGE, labels: testLabels() });
    const session = await provider.createSession({ sessionId: testSessionId('lines') });
    try {
      await session.writeTextFile({ path: '/tmp/l.txt', content: 'one\ntwo\nthree\nfour\n' });
      expect(await session.readTextFile({ path: '/tmp/l.txt', startLine: 2, endLine: 3 })).toBe('two\nthree');
      expect(await session.readTextFile({ path: '/tmp/l.txt', startLine: 0, endLine: 1 })).toBe('one');
      for (const bad of [{ startLine: Number.NaN }, { endLine: 2.5 }, { startLine: '1' as unknown as number }, { encoding: 'no-such-encoding' }]) {
        await expect(session.readTextFile({ path: '/tmp/missing.txt', ...bad })).rejects.toMatchObject({ code: 'E_INVALID_ARGUMENT' });
      }
    } finally {
      await session.destroy();
    }
  });

  test("an aborted spawn: wait() and both streams reject with the caller's own abortSignal.reason", async () => {
    const provider = createDockerSandboxProvider({ image: TEST_IMAGE, labels: testLabels() });
    const session = await provider.createSession({ sessionId: testSessionId('abort') });
    try {
      const controller = new AbortController();
      const reason = { mine: 'the caller said stop' };
      const proc = await session.spawn({ command: 'echo started; sleep 600', abortSignal: controller.signal });
      const reader = proc.stdout.getReader();
      const first = await reader.read();
      expect(Buffer.from(first.value ?? []).toString()).toContain('started');
      controller.abort(reason);
      await expect(proc.wait()).rejects.toBe(reason);
      await expect(
        (async () => {
          for (;;) if ((await reader.read()).done) return 'ended';
        })(),
      ).rejects.toBe(reason);
      await expect(
        (async () => {
          for await (const _ of proc.stderr) void _;
        })(),
      ).rejects.toBe(reason);
      // The tree kill itself worked: no `sleep 600` left (the keep-alive sleep is another one).
      // It runs after the abort settled (docs/design.md#exec): poll for it, bounded.
      await vi.waitFor(
        async () => {
          const { stdout } = await session.run({ command: 'ps -o args= | grep -c "^sleep 600$" || true' });
          expect(stdout.trim()).toBe('0');
        },
        { timeout: 30_000, interval: 100 },
      );
    } finally {
      await session.destroy();
    }
  });
});
