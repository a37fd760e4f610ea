// session.remove(): by container id, never by name; one engine call for concurrent calls;
// `already-removed` afterwards; an adopted handle removes only when forced; asyncDispose removes.
import { expect } from 'vitest';
import { containerName, createSession, peek, resumeSession } from '../../index.mjs';
import { startChild } from '../helpers/child.js';
import { inspectContainer, inspectVolume, removeContainer } from '../helpers/engine-http.mjs';
import { sessionTest as test } from '../helpers/fixtures.js';
import { TEST_IMAGE } from '../helpers/test-image.mjs';
import { engineSuite } from '../helpers/suite.js';

engineSuite('remove', () => {

  test('removes the container by id, with its readiness record', async ({ sessionId, labels }) => {
    const session = await createSession({ sessionId, image: TEST_IMAGE, labels });
    expect(await inspectVolume(`berth-ready-${session.id}`)).not.toBeNull();
    await expect(session.remove()).resolves.toEqual({ removed: true });
    expect(await inspectContainer(session.id)).toBeNull();
    expect(await inspectVolume(`berth-ready-${session.id}`)).toBeNull();
    expect(await peek(sessionId)).toBeNull();
  });

  test("a container recreated under the name by someone else survives our remove() ('absent')", async ({
    sessionId,
    labels,
    handMade,
  }) => {
    const session = await createSession({ sessionId, image: TEST_IMAGE, labels });
    // Ours goes away behind the handle's back, and someone else takes the name.
    expect(await removeContainer(session.id)).toBe(true);
    const theirs = await handMade(containerName(sessionId));
    expect(theirs).not.toBe(session.id);

    await expect(session.remove()).resolves.toEqual({ removed: false, reason: 'absent' });
    expect(await inspectVolume(`berth-ready-${session.id}`)).toBeNull();
    const survivor = await inspectContainer(containerName(sessionId));
    expect(survivor?.Id).toBe(theirs);
    expect(survivor?.State.Running).toBe(true);
    await expect(session.remove()).resolves.toEqual({ removed: false, reason: 'already-removed' });
    expect((await inspectContainer(theirs))?.State.Running).toBe(true);
  });

  test('concurrent remove() calls: exactly one removes, the other is already-removed; so is any later call', async ({
    sessionId,
    labels,
  }) => {
    const session = await createSession({ sessionId, image: TEST_IMAGE, labels });
    const results = await Promise.all([session.remove(), session.remove(), session.remove()]);
    expect(results.filter((r) => r.removed)).toEqual([{ removed: true }]);
    expect(results.filter((r) => !r.removed)).toEqual([
      { removed: false, reason: 'already-removed' },
      { removed: false, reason: 'already-removed' },
    ]);
    expect(await inspectContainer(session.id)).toBeNull();
    await expect(session.remove()).resolves.toEqual({ removed: false, reason: 'already-removed' });
    await expect(session.remove({ force: true })).resolves.toEqual({ removed: false, reason: 'already-removed' });
  });

  test("an adopted handle (another process created it): 'not-owner' (container kept) unless { force: true }", async ({
    sessionId,
    labels,
  }) => {
    const creator = await startChild();
    try {
      const created = await creator.call('createSession', { sessionId, image: TEST_IMAGE, labels });
      const adopted = await resumeSession({ sessionId });
      expect(adopted).toMatchObject({ id: created.id, ownership: 'adopted' });

      await expect(adopted.remove()).resolves.toEqual({ removed: false, reason: 'not-owner' });
      await expect(adopted.stop()).resolves.toEqual({ stopped: false, reason: 'not-owner' });
      expect((await inspectContainer(created.id))?.State.Running).toBe(true);

      await expect(adopted.remove({ force: true })).resolves.toEqual({ removed: true });
      expect(await inspectContainer(created.id)).toBeNull();
      // The creator's handle now finds it gone.
      await expect(creator.call('remove', created.handle)).resolves.toEqual({ removed: false, reason: 'absent' });
    } finally {
      await creator.kill();
    }
  });

  test('Symbol.asyncDispose removes an owned session', async ({ sessionId, labels }) => {
    const session = await createSession({ sessionId, image: TEST_IMAGE, labels });
    await session[Symbol.asyncDispose]();
    expect(await inspectContainer(session.id)).toBeNull();
    await expect(session.remove()).resolves.toEqual({ removed: false, reason: 'already-removed' });
  });

  test('Symbol.asyncDispose of an adopted handle leaves the container', async ({ sessionId, labels }) => {
    const creator = await startChild();
    try {
      const created = await creator.call('createSession', { sessionId, image: TEST_IMAGE, labels });
      const adopted = await resumeSession({ sessionId });
      expect(adopted.ownership).toBe('adopted');
      await adopted[Symbol.asyncDispose]();
      expect((await inspectContainer(created.id))?.State.Running).toBe(true);
      await expect(creator.call('remove', created.handle)).resolves.toEqual({ removed: true });
    } finally {
      await creator.kill();
    }
  });

  test('a stopped session is removed too', async ({ sessionId, labels }) => {
    const session = await createSession({ sessionId, image: TEST_IMAGE, labels });
    await expect(session.stop({ timeoutMs: 0 })).resolves.toEqual({ stopped: true });
    await expect(session.remove()).resolves.toEqual({ removed: true });
    expect(await inspectContainer(session.id)).toBeNull();
  });
});
