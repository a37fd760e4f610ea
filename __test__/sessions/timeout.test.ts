// Session lifetimes on the real engine: createSession({ timeoutMs }) and session.setTimeout(ms).
// The three enforcers: the owning process's timer, any process's reapOrphans (reason
// 'expired'), and the container's own deadline keep-alive (no berth process needed);
// listSessions only shows a session past its deadline.
// Timed waits poll with generous bounds; nothing here asserts speed.
import { afterAll, beforeAll, expect } from 'vitest';
import {
  createSession,
  InvalidArgumentError,
  MAX_REMOVE_AFTER_STOP_MS,
  peek,
  reapOrphans,
  resumeSession,
  SessionBusyError,
  SessionNotFoundError,
} from '../../index.mjs';
import { createDockerSandboxProvider } from '../../harness.mjs';
import { startChild } from '../helpers/child.js';
import { inspectContainer } from '../helpers/engine-http.mjs';
import { startEngineProxy } from '../helpers/engine-proxy.mjs';
import { expectBerthError } from '../helpers/expect-error.js';
import { sessionTest as test } from '../helpers/fixtures.js';
import { recordsOf } from '../helpers/records.mjs';
import { TEST_IMAGE } from '../helpers/test-image.mjs';
import { engineSuite } from '../helpers/suite.js';

type Proxy = Awaited<ReturnType<typeof startEngineProxy>>;
let proxy: Proxy;

/** The owner timer's slack plus a poll step: "one timer tick" in the words. */
const TICK_MS = 1_000;
/** A bound for a hung or very loaded run (2-core CI): not a speed claim. */
const LOADED_MS = 30_000;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls `check` until true, for at most `withinMs` (a bound for a hung run, not a timing assertion). */
async function eventually(check: () => Promise<boolean>, withinMs: number): Promise<boolean> {
  const until = Date.now() + withinMs;
  for (;;) {
    if (await check()) return true;
    if (Date.now() > until) return false;
    await sleep(200);
  }
}

/**
 * Whether container `id` and its records are gone. Podman 4.3 can answer an inspect during a
 * removal with HTTP 500 "no such container": that poll counts as "not yet", the next one decides.
 */
const gone = (id: string) => async () => {
  try {
    return (await inspectContainer(id)) === null && (await recordsOf(id)).length === 0;
  } catch {
    return false;
  }
};

engineSuite('timeoutMs and setTimeout', () => {
  beforeAll(async () => {
    proxy = await startEngineProxy();
  });
  afterAll(async () => {
    await proxy?.close();
  });

  test('bad values are E_INVALID_ARGUMENT before any engine call; nothing is created', async ({ sessionId, labels }) => {
    const bads = [-1, 1.5, Number.NaN, MAX_REMOVE_AFTER_STOP_MS + 1, '1000', null, Number.POSITIVE_INFINITY];
    for (const bad of bads) {
      const attempt = await proxy.during(() =>
        expectBerthError(
          createSession({ socketPath: proxy.socketPath, sessionId, image: TEST_IMAGE, labels, timeoutMs: bad as number }),
          InvalidArgumentError,
        ),
      );
      expect(attempt.value.details).toMatchObject({ field: 'timeoutMs' });
      expect(attempt.requests).toEqual([]);
    }
    expect(await peek(sessionId)).toBeNull();
    expect(() => createDockerSandboxProvider({ image: TEST_IMAGE, timeoutMs: 0.5 })).toThrow(
      expect.objectContaining({ code: 'E_INVALID_ARGUMENT' }),
    );
    const session = await createSession({ socketPath: proxy.socketPath, sessionId, image: TEST_IMAGE, labels });
    try {
      expect(session.expiresAt).toBeNull();
      for (const bad of [...bads, undefined]) {
        const attempt = await proxy.during(() => expectBerthError(session.setTimeout(bad as number), InvalidArgumentError));
        expect(attempt.value.details).toMatchObject({ field: 'ms' });
        expect(attempt.requests).toEqual([]);
      }
      // Without timeoutMs the keep-alive stays today's sleep.
      expect((await inspectContainer(session.id))?.Config.Entrypoint).toEqual(['sleep', '2147483647']);
    } finally {
      await session.remove();
    }
    await expect(session.setTimeout(1_000)).rejects.toMatchObject({ code: 'E_SESSION_NOT_FOUND' });
  });

  test('timeoutMs 3000: labelled, expiresAt reported, removed by the owner within 3 s + a tick, then resume says expired', async ({ sessionId, labels }) => {
    const before = Date.now();
    const session = await createSession({ sessionId, image: TEST_IMAGE, labels, timeoutMs: 3_000 });
    const after = Date.now();
    const inspected = await inspectContainer(session.id);
    expect(inspected?.Config.Labels['dev.berth.timeout-ms']).toBe('3000');
    expect(inspected?.Config.Labels['dev.berth.keep-alive']).toBe('deadline');
    expect(inspected?.Config.Entrypoint?.[0]).toBe('sh');
    const seen = await peek(sessionId);
    expect(seen?.expiresAt).toBe(session.expiresAt);
    expect(session.expiresAt).toBeGreaterThanOrEqual(before + 3_000);
    expect(session.expiresAt).toBeLessThanOrEqual(after + 3_000);
    // Gone at the deadline plus one tick; the wider bound only keeps a loaded run from hanging.
    expect(await eventually(gone(session.id), 3_000 + TICK_MS + LOADED_MS)).toBe(true);
    await expect(session.remove()).resolves.toEqual({ removed: false, reason: 'already-removed' });
    const resumed = await expectBerthError(resumeSession({ sessionId }), SessionNotFoundError);
    expect(resumed.details).toMatchObject({ reason: 'expired', sessionId });
  });

  test('setTimeout before the deadline keeps it past the first deadline and removes it at the second', async ({ sessionId, labels }) => {
    const session = await createSession({ sessionId, image: TEST_IMAGE, labels, timeoutMs: 4_000 });
    const first = session.expiresAt as number;
    const second = await session.setTimeout(10_000);
    expect(second).toBeGreaterThan(first);
    expect(session.expiresAt).toBe(second);
    expect(Math.abs(((await peek(sessionId))?.expiresAt as number) - second)).toBeLessThanOrEqual(1_000);
    // The container learned it too: the keep-alive's deadline file, in whole seconds.
    const file = await session.exec(['cat', '/run/berth/deadline']);
    expect(Number(file.stdout.toString().trim())).toBe(Math.ceil(second / 1000));
    await sleep(Math.max(0, first + 2 * TICK_MS - Date.now()));
    expect((await inspectContainer(session.id))?.State.Running).toBe(true);
    expect(await eventually(gone(session.id), Math.max(0, second - Date.now()) + TICK_MS + LOADED_MS)).toBe(true);
  });

  test('owner SIGKILLed, no berth process watching: the container stops by itself, the next reapOrphans removes it as expired', async ({ sessionId, labels }) => {
    const child = await startChild();
    let created: { id: string };
    try {
      created = await child.call('createSession', { sessionId, image: TEST_IMAGE, labels, timeoutMs: 3_000 });
    } finally {
      await child.kill('SIGKILL');
    }
    const deadline = (await peek(sessionId))?.expiresAt as number;
    expect(deadline).toBeGreaterThan(0);
    // This process never touches the session until the check: only the container acts.
    const stopped = async () => (await inspectContainer(created.id))?.State.Running === false;
    expect(await eventually(stopped, Math.max(0, deadline + 5_000 - Date.now()))).toBe(true);
    const dry = await reapOrphans({ labels, dryRun: true });
    expect(dry.removed).toEqual([expect.objectContaining({ id: created.id, reason: 'expired' })]);
    const report = await reapOrphans({ labels });
    expect(report.removed).toEqual([expect.objectContaining({ id: created.id, sessionId, reason: 'expired' })]);
    expect(await inspectContainer(created.id)).toBeNull();
    expect(await recordsOf(created.id)).toEqual([]);
  });

  test('resume past the deadline but not yet removed: removed by id, E_SESSION_NOT_FOUND expired, never revived', async ({ sessionId, labels }) => {
    const child = await startChild();
    let created: { id: string };
    try {
      // A custom entrypoint: the container does not stop by itself, only the rule is left.
      created = await child.call('createSession', { sessionId, image: TEST_IMAGE, labels, timeoutMs: 1_000, entrypoint: ['sleep', '600'] });
    } finally {
      await child.kill('SIGKILL');
    }
    const inspected = await inspectContainer(created.id);
    expect(inspected?.Config.Labels['dev.berth.keep-alive']).toBeUndefined();
    expect(inspected?.Config.Entrypoint).toEqual(['sleep', '600']);
    await sleep(1_500);
    const e = await expectBerthError(resumeSession({ sessionId }), SessionNotFoundError);
    expect(e.details).toMatchObject({ reason: 'expired' });
    expect(await inspectContainer(created.id)).toBeNull();
    expect(await recordsOf(created.id)).toEqual([]);
  });

  test('an adopted handle cannot extend: E_SESSION_BUSY not-owner', async ({ sessionId, labels }) => {
    const child = await startChild();
    try {
      const created = await child.call('createSession', { sessionId, image: TEST_IMAGE, labels, timeoutMs: 600_000 });
      const adopted = await resumeSession({ sessionId });
      expect(adopted.ownership).toBe('adopted');
      expect(adopted.expiresAt).toBe((await peek(sessionId))?.expiresAt);
      const e = await expectBerthError(adopted.setTimeout(1_000), SessionBusyError);
      expect(e.details).toMatchObject({ reason: 'not-owner' });
      expect((await peek(sessionId))?.expiresAt).toBe(adopted.expiresAt);
      await adopted.release();
      await child.call('remove', created.handle);
    } finally {
      await child.kill();
    }
  });

  test('listSessions lists a session past its deadline and removes nothing; reapOrphans removes it', async ({ sessionId, labels }) => {
    const { listSessions } = await import('../../index.mjs');
    const child = await startChild();
    let created: { id: string };
    try {
      created = await child.call('createSession', { sessionId, image: TEST_IMAGE, labels, timeoutMs: 600_000 });
      const listed = await listSessions({ labels });
      expect(listed).toEqual([expect.objectContaining({ id: created.id, expiresAt: expect.any(Number) })]);
    } finally {
      await child.kill('SIGKILL');
    }
    // Shortened by nobody: an owner's handle died with it. Use a fresh owner-free rule check
    // instead: a second session whose deadline has passed.
    const short = await startChild();
    let second: { id: string };
    try {
      second = await short.call('createSession', { sessionId: `${sessionId}-b`, image: TEST_IMAGE, labels, timeoutMs: 500, entrypoint: ['sleep', '600'] });
    } finally {
      await short.kill('SIGKILL');
    }
    await sleep(1_000);
    const listed = await listSessions({ labels });
    expect(listed.map((l) => l.id).sort()).toEqual([created.id, second.id].sort());
    expect(listed.find((l) => l.id === second.id)!.expiresAt).toBeLessThanOrEqual(Date.now());
    expect(await inspectContainer(second.id)).not.toBeNull();
    const report = await reapOrphans({ labels });
    expect(report.removed).toEqual(expect.arrayContaining([expect.objectContaining({ id: second.id, reason: 'expired' })]));
    expect(await inspectContainer(second.id)).toBeNull();
    // The first one's owner is dead, its deadline ahead: parked, kept by the reaper; removed here.
    expect((await reapOrphans({ labels })).kept).toEqual([expect.objectContaining({ id: created.id, reason: 'parked' })]);
    await (await resumeSession({ sessionId, takeOver: true })).remove();
  });
});
