// peek: inspect only. It reports what holds a session's name and never creates, starts,
// unpauses or pulls anything; checked against the engine's own view before and after.
import { expect } from 'vitest';
import { containerName, createSession, peek } from '../../index.mjs';
import { inspectContainer, listContainers, pauseContainer, unpauseContainer } from '../helpers/engine-http.mjs';
import { sessionTest as test } from '../helpers/fixtures.js';
import { TEST_IMAGE } from '../helpers/test-image.mjs';
import { reportedImage } from '../helpers/test-engine.mjs';
import { engineSuite } from '../helpers/suite.js';

engineSuite('peek', () => {

  test('reports a live session: id, name, state, readiness, owner (this process), image', async ({ sessionId, labels, track }) => {
    const session = track(await createSession({ sessionId, image: TEST_IMAGE, labels, ports: [8080] }));
    const seen = await peek(sessionId);
    expect(seen).toMatchObject({
      name: session.name,
      id: session.id,
      sessionId,
      managed: true,
      ready: true,
      state: 'running',
      rawState: 'running',
      image: reportedImage(TEST_IMAGE),
      owner: { pid: process.pid, liveness: 'alive' },
    });
    expect(Date.parse(seen!.createdAt)).not.toBeNaN();
    expect(seen!.ports['8080/tcp']).toBe(await session.hostAddress(8080));
  });

  test('a stopped session stays stopped', async ({ sessionId, labels, track, session }) => {
    await expect(session.stop({ timeoutMs: 0 })).resolves.toEqual({ stopped: true });
    const before = await inspectContainer(session.id);
    expect(await peek(sessionId)).toMatchObject({ id: session.id, state: 'exited', ready: true });
    const after = await inspectContainer(session.id);
    expect(after?.State).toMatchObject({ Status: 'exited', Running: false, StartedAt: before?.State.StartedAt });
  });

  test('a paused session stays paused', async ({ sessionId, labels, track, session }) => {
    await pauseContainer(session.id);
    try {
      expect(await peek(sessionId)).toMatchObject({ id: session.id, state: 'paused', rawState: 'paused' });
      expect((await inspectContainer(session.id))?.State).toMatchObject({ Status: 'paused', Paused: true });
    } finally {
      await unpauseContainer(session.id);
    }
  });

  test('an absent session stays absent: null, and no container appears', async ({ sessionId }) => {
    const name = containerName(sessionId);
    expect(await peek(sessionId)).toBeNull();
    expect(await peek(sessionId, { prefix: 'please' })).toBeNull();
    expect(await inspectContainer(name)).toBeNull();
    expect(await listContainers({ name: [sessionId] })).toEqual([]);
  });

  test('an unmanaged container under the name: managed false, sessionId null, owner null', async ({ sessionId, handMade }) => {
    const id = await handMade(containerName(sessionId));
    expect(await peek(sessionId)).toEqual({
      name: containerName(sessionId),
      id,
      sessionId: null,
      managed: false,
      ready: false,
      state: 'running',
      rawState: 'running',
      image: reportedImage(TEST_IMAGE),
      createdAt: expect.any(String),
      owner: null,
      ports: {},
      expiresAt: null,
      lifecycle: null,
      death: null,
    });
    expect((await inspectContainer(id))?.State.Running).toBe(true);
  });

  test('a stopped unmanaged container is not started by peek', async ({ sessionId, handMade }) => {
    const id = await handMade(containerName(sessionId), { start: false });
    expect(await peek(sessionId)).toMatchObject({ id, managed: false, state: 'created' });
    expect((await inspectContainer(id))?.State).toMatchObject({ Status: 'created', Running: false });
  });

  test('the prefix picks the name: a session under another prefix is not seen', async ({ sessionId, labels, track }) => {
    const session = track(await createSession({ sessionId, image: TEST_IMAGE, labels, prefix: 'please' }));
    expect(session.name).toBe(containerName(sessionId, 'please'));
    expect(await peek(sessionId)).toBeNull();
    expect(await peek(sessionId, { prefix: 'please' })).toMatchObject({ id: session.id, managed: true, sessionId });
  });
});
