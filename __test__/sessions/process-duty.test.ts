// The duty to remove belongs to the process, not to one handle: a resume in the creating
// process shares the first handle's duty (same ownership; remove/stop act; removals coalesce
// into one engine DELETE, counted through the engine proxy), while another process's resume
// stays adopted.
import { afterAll, beforeAll, expect } from 'vitest';
import { createSession, resumeSession, SessionNotFoundError } from '../../index.mjs';
import { startChild } from '../helpers/child.js';
import { inspectContainer } from '../helpers/engine-http.mjs';
import { request, startEngineProxy } from '../helpers/engine-proxy.mjs';
import { sessionTest as test } from '../helpers/fixtures.js';
import { recordsOf } from '../helpers/records.mjs';
import { TEST_IMAGE } from '../helpers/test-image.mjs';
import { engineSuite } from '../helpers/suite.js';

type Proxy = Awaited<ReturnType<typeof startEngineProxy>>;
let proxy: Proxy;

const deletes = (id: string) => proxy.requests.filter((r) => r.method === 'DELETE' && r.path.startsWith(`/containers/${id}`));

engineSuite('process duty', () => {
  beforeAll(async () => {
    proxy = await startEngineProxy();
  });
  afterAll(async () => {
    await proxy?.close();
  });

  test('a resume in the creating process shares the duty: its remove() removes, the first handle then says already-removed', async ({
    sessionId,
    labels,
  }) => {
    const where = { socketPath: proxy.socketPath };
    const first = await createSession({ ...where, sessionId, image: TEST_IMAGE, labels });
    const second = await resumeSession({ ...where, sessionId });
    expect(second.ownership).toBe('created');
    expect(second.id).toBe(first.id);
    // No holder record of its own: the creator's duty record is the one.
    expect((await recordsOf(first.id)).filter((r) => r.role === 'adopter')).toEqual([]);
    await expect(second.release()).resolves.toEqual({ released: false, reason: 'owner' });
    await expect(second.remove()).resolves.toEqual({ removed: true });
    await expect(first.remove()).resolves.toEqual({ removed: false, reason: 'already-removed' });
    expect(deletes(first.id)).toHaveLength(1);
    expect(await inspectContainer(first.id)).toBeNull();
    expect(await recordsOf(first.id)).toEqual([]);
  });

  test('stop() through the resumed handle acts; resuming again starts it, still created', async ({ sessionId, labels }) => {
    const first = await createSession({ sessionId, image: TEST_IMAGE, labels });
    const second = await resumeSession({ sessionId });
    await expect(second.stop({ timeoutMs: 0 })).resolves.toEqual({ stopped: true });
    expect((await inspectContainer(first.id))?.State.Running).toBe(false);
    const third = await resumeSession({ sessionId });
    expect(third.ownership).toBe('created');
    expect((await inspectContainer(first.id))?.State.Running).toBe(true);
    await expect(third.remove()).resolves.toEqual({ removed: true });
    await expect(second.remove()).resolves.toEqual({ removed: false, reason: 'already-removed' });
  });

  test('concurrent removals through several handles of one process: one engine DELETE', async ({ sessionId, labels }) => {
    const where = { socketPath: proxy.socketPath };
    const first = await createSession({ ...where, sessionId, image: TEST_IMAGE, labels });
    const handles = [first, await resumeSession({ ...where, sessionId }), await resumeSession({ ...where, sessionId })];
    const results = await Promise.all(handles.map((h) => h.remove()));
    expect(results.filter((r) => r.removed)).toHaveLength(1);
    for (const r of results.filter((r) => !r.removed)) expect(['already-removed', 'absent']).toContain(r.reason);
    expect(deletes(first.id)).toHaveLength(1);
  });

  test('a resume racing a removal through the first handle: one DELETE, both resolve', async ({ sessionId, labels }) => {
    const where = { socketPath: proxy.socketPath };
    const first = await createSession({ ...where, sessionId, image: TEST_IMAGE, labels });
    // Hold the DELETE so the resume runs while the removal is in flight.
    const held = proxy.hold(request('DELETE', new RegExp(`^/containers/${first.id}`)));
    const removing = first.remove();
    await held.arrived;
    const resuming = resumeSession({ ...where, sessionId }).then(
      (s) => ({ ok: true as const, s }),
      (error: unknown) => ({ ok: false as const, error }),
    );
    held.release();
    await expect(removing).resolves.toEqual({ removed: true });
    const resumed = await resuming;
    if (resumed.ok) {
      // It got a handle before the removal finished: it shares the duty, so it has nothing left to remove.
      expect(resumed.s.ownership).toBe('created');
      const again = await resumed.s.remove();
      expect(again.removed).toBe(false);
      expect(['already-removed', 'absent']).toContain(again.reason);
    } else {
      expect(SessionNotFoundError.isInstance(resumed.error)).toBe(true);
    }
    expect(deletes(first.id)).toHaveLength(1);
    expect(await inspectContainer(first.id)).toBeNull();
  });

  test("another process's resume while the owner lives stays adopted", async ({ sessionId, labels }) => {
    const created = await createSession({ sessionId, image: TEST_IMAGE, labels });
    const other = await startChild();
    try {
      const adopted = await other.call('resumeSession', { sessionId });
      expect(adopted.ownership).toBe('adopted');
      await expect(other.call('remove', adopted.handle)).resolves.toEqual({ removed: false, reason: 'not-owner' });
      expect((await inspectContainer(created.id))?.State.Running).toBe(true);
    } finally {
      await other.kill();
    }
    await expect(created.remove()).resolves.toEqual({ removed: true });
  });
});
