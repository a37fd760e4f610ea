// A removed session holds nothing (docs/design.md#exec, "Command channel"): remove() closes the
// session's command channels and its file channel, so 100 lifecycles in one process (create,
// runs, a write and a read, remove; every third one through the harness provider, ending in
// destroy()) leave this process's open descriptors flat, with no forced GC; and a spawned process's wait() settles when its session is removed or its helper is lost,
// even with its output unread.
import { readdirSync } from 'node:fs';
import { afterAll, describe, expect, vi } from 'vitest';
import { createSession, EngineError } from '../index.mjs';
import { createDockerSandboxProvider } from '../harness.mjs';
import { engineAvailable } from './helpers/engine-available.js';
import { execIn } from './helpers/engine-http.mjs';
import { processesIn, waitForProcess } from './helpers/engine-wait.js';
import { expectBerthError } from './helpers/expect-error.js';
import { sessionTest as test } from './helpers/fixtures.js';
import { expectNoLeaks } from './helpers/leak-check.mjs';
import { testSessionId } from './helpers/run-label.mjs';
import { TEST_IMAGE } from './helpers/test-image.mjs';

/** Lifecycles in the fd test, and how many run at once. */
const LIFECYCLES = 100;
const AT_ONCE = 10;
/** Descriptors the process may hold over its count before: the engine transport keeps idle connections pooled (up to one per call that ran at once, closed after 30 s idle), so a few more may be open under load; a leak is one or more per lifecycle (100 here), far over this. */
const FD_SLACK = 20;
/** A wait() after its session's removal settles within this, in ms (generous for a loaded CI machine). */
const SETTLE_MS = 5000;

const openFds = () => readdirSync('/proc/self/fd').length;

describe.skipIf(!engineAvailable())('a removed session holds nothing', () => {
  afterAll(async () => {
    await expectNoLeaks();
  });

  test(`${LIFECYCLES} lifecycles (create, a run, a write and a read, remove or the harness's destroy): open descriptors flat`, async ({ engine, labels }) => {
    const provider = createDockerSandboxProvider({ ...engine, image: TEST_IMAGE, labels });
    let n = 0;
    const lifecycle = async () => {
      if (n++ % 3 === 1) {
        // The issue's own case: a harness session's lifecycle, ended by destroy().
        const sandbox = await provider.createSession({ sessionId: testSessionId('fd') });
        try {
          expect((await sandbox.run({ command: 'echo 1' })).stdout).toBe('1\n');
          await sandbox.writeTextFile({ path: '/tmp/note.txt', content: 'note' });
          expect(await sandbox.readTextFile({ path: '/tmp/note.txt' })).toBe('note');
        } finally {
          await sandbox.destroy();
        }
        return;
      }
      const s = await createSession({ ...engine, sessionId: testSessionId('fd'), image: TEST_IMAGE, labels });
      try {
        for (let i = 0; i < 1; i++) expect((await s.exec(['echo', String(i)])).stdout.toString()).toBe(`${i}\n`);
        await s.writeFile('/tmp/note.txt', 'note');
        expect((await s.readFile('/tmp/note.txt'))?.toString()).toBe('note');
      } finally {
        expect(await s.remove()).toEqual({ removed: true });
      }
    };
    // Warms up what a process keeps: the engine's version, and the pool's idle connections
    // for AT_ONCE calls at once.
    await Promise.all(Array.from({ length: AT_ONCE }, lifecycle));
    const before = openFds();
    for (let done = 0; done < LIFECYCLES; done += AT_ONCE) {
      await Promise.all(Array.from({ length: AT_ONCE }, lifecycle));
    }
    // The channels' connections close as remove() settles, their readers' ends a moment later.
    await vi.waitFor(() => expect(openFds()).toBeLessThanOrEqual(before + FD_SLACK), { timeout: 10_000, interval: 100 });
    console.info(`[berth tests] open descriptors: ${before} before, ${openFds()} after ${LIFECYCLES} lifecycles`);
  }, 240_000);

  test('spawn with unread output: wait() settles when its helper is lost, its container stopped, its session removed', async ({ engine, sessionId, labels, track }) => {
    const s = track(await createSession({ ...engine, sessionId, image: TEST_IMAGE, labels }));
    // Its helper lost (killed outside berth): E_ENGINE, though nothing read its output.
    const flood = await s.spawn(['yes']);
    await waitForProcess(s.id, 'yes');
    await execIn(s.id, ['sh', '-c', 'for p in /proc/[0-9]*; do tr "\\0" " " < $p/cmdline 2>/dev/null | grep -q "^/run/berth/agen[t]-" && kill -9 ${p#/proc/}; done; exit 0']);
    const lostAt = performance.now();
    await expectBerthError(flood.wait(), EngineError);
    expect(performance.now() - lostAt).toBeLessThan(SETTLE_MS);
    // Its session removed: over the channel and over the engine exec (BERTH_COMMAND_CHANNEL=0).
    const overChannel = await s.spawn(['yes']);
    process.env.BERTH_COMMAND_CHANNEL = '0';
    let overEngine;
    try {
      overEngine = await s.spawn(['yes']);
    } finally {
      delete process.env.BERTH_COMMAND_CHANNEL;
    }
    const unread = [overChannel, overEngine];
    await vi.waitFor(async () => expect((await processesIn(s.id)).filter((p) => p.args === 'yes')).toHaveLength(2), { timeout: 10_000, interval: 100 });
    const removedAt = performance.now();
    expect(await s.remove()).toEqual({ removed: true });
    for (const p of unread) {
      await expectBerthError(p.wait(), EngineError);
    }
    expect(performance.now() - removedAt).toBeLessThan(SETTLE_MS);
    const s2 = track(await createSession({ ...engine, sessionId: testSessionId('stop'), image: TEST_IMAGE, labels }));
    // Its container stopped: the helper dies with it, so a channel command settles.
    const stopped = await s2.spawn(['yes']);
    await vi.waitFor(async () => expect((await processesIn(s2.id)).filter((p) => p.args === 'yes')).toHaveLength(1), { timeout: 10_000, interval: 100 });
    const stoppedAt = performance.now();
    await s2.stop();
    await expectBerthError(stopped.wait(), EngineError);
    expect(performance.now() - stoppedAt).toBeLessThan(SETTLE_MS + 10_000); // the stop's own grace included
  });
});
