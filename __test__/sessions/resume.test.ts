// resumeSession: the only path that adopts. Readiness (busy while its creator sets it up,
// incomplete once that creator is dead), stopped and paused sessions, absent and foreign names.
import { afterEach, expect } from 'vitest';
import {
  containerName,
  createSession,
  ForeignContainerError,
  peek,
  resumeSession,
  SessionBusyError,
  SessionExistsError,
  SessionIncompleteError,
  SessionNotFoundError,
} from '../../index.mjs';
import { killAllChildren, startChild } from '../helpers/child.js';
import { execIn, inspectContainer, pauseContainer } from '../helpers/engine-http.mjs';
import { waitForProcess, waitForRunningContainer } from '../helpers/engine-wait.js';
import { expectBerthError } from '../helpers/expect-error.js';
import { sessionTest as test } from '../helpers/fixtures.js';
import { removeHandMade } from '../helpers/records.mjs';
import { TEST_IMAGE } from '../helpers/test-image.mjs';
import { engineSuite } from '../helpers/suite.js';

const RELEASE_FILE = '/tmp/release-setup';
/** A setup command that runs until the test creates RELEASE_FILE in the container. */
const WAIT_FOR_RELEASE = `while [ ! -e ${RELEASE_FILE} ]; do sleep 0.05; done`;

engineSuite('resumeSession', () => {
  afterEach(killAllChildren);

  test("while another process runs setup: E_SESSION_BUSY ('initialising'); once ready it adopts", async ({ sessionId, labels }) => {
    const creator = await startChild();
    const creating = creator.call('createSession', { sessionId, image: TEST_IMAGE, labels, setupCommands: [WAIT_FOR_RELEASE] });
    creating.catch(() => {}); // settled below; a failed test kills the child
    const { Id: id } = await waitForRunningContainer(containerName(sessionId));
    await waitForProcess(id, (p) => p.args.includes(RELEASE_FILE));

    const busy = await expectBerthError(resumeSession({ sessionId }), SessionBusyError);
    expect(busy.details).toMatchObject({
      reason: 'initialising',
      sessionId,
      name: containerName(sessionId),
      id,
      owner: { pid: creator.pid, liveness: 'alive' },
    });
    expect(await peek(sessionId)).toMatchObject({ id, ready: false, state: 'running' });

    // Setup finishes: the creator's create resolves and a resume now adopts.
    expect((await execIn(id, ['touch', RELEASE_FILE])).exitCode).toBe(0);
    const created = await creating;
    expect(created).toMatchObject({ id, ownership: 'created' });
    const adopted = await resumeSession({ sessionId });
    expect(adopted).toMatchObject({ id, ownership: 'adopted', owner: { pid: creator.pid, liveness: 'alive' } });
    await expect(creator.call('remove', created.handle)).resolves.toEqual({ removed: true });
  });

  test('a creator SIGKILLed during setup leaves E_SESSION_INCOMPLETE, and resume adopts nothing', async ({ sessionId, labels }) => {
    const creator = await startChild();
    const creating = creator.call('createSession', { sessionId, image: TEST_IMAGE, labels, setupCommands: [['sleep', '1003']] });
    creating.catch(() => {}); // rejects when the child dies
    const { Id: id } = await waitForRunningContainer(containerName(sessionId));
    try {
      await waitForProcess(id, 'sleep 1003');
      expect(await creator.kill('SIGKILL')).toMatchObject({ signal: 'SIGKILL' });

      const incomplete = await expectBerthError(resumeSession({ sessionId }), SessionIncompleteError);
      expect(incomplete.details).toMatchObject({ sessionId, id, owner: { pid: creator.pid, liveness: 'dead' } });
      expect(await peek(sessionId)).toMatchObject({ id, ready: false, owner: { liveness: 'dead' } });
      expect((await inspectContainer(id))?.State.Running).toBe(true);
    } finally {
      // With the records the killed creator wrote before its setup (the network guard's).
      await removeHandMade(id);
    }
  });

  test('a stopped session is started again with its files kept', async ({ sessionId, labels, track }) => {
    const created = track(await createSession({ sessionId, image: TEST_IMAGE, labels, setupCommands: ['echo from-setup > /root/kept'] }));
    expect((await created.exec(['sh', '-c', 'echo from-exec >> /root/kept'])).exitCode).toBe(0);
    await expect(created.stop({ timeoutMs: 0 })).resolves.toEqual({ stopped: true });
    expect(await peek(sessionId)).toMatchObject({ state: 'exited' });

    const resumed = await resumeSession({ sessionId });
    // Same process as the creator: the resumed handle shares its duty to remove.
    expect(resumed).toMatchObject({ id: created.id, name: created.name, sessionId, ownership: 'created' });
    expect((await inspectContainer(created.id))?.State).toMatchObject({ Status: 'running', Running: true });
    const out = await resumed.exec(['cat', '/root/kept']);
    expect(out.stdout.toString()).toBe('from-setup\nfrom-exec\n');
  });

  test('a paused session is unpaused', async ({ sessionId, labels, track }) => {
    const created = track(await createSession({ sessionId, image: TEST_IMAGE, labels }));
    await pauseContainer(created.id);
    expect(await peek(sessionId)).toMatchObject({ state: 'paused' });

    const resumed = await resumeSession({ sessionId });
    expect(resumed.id).toBe(created.id);
    expect((await inspectContainer(created.id))?.State).toMatchObject({ Status: 'running', Paused: false, Running: true });
    expect((await resumed.exec(['true'])).exitCode).toBe(0);
  });

  test('the creating process resuming its own session shares its duty (created) and names itself as owner', async ({
    sessionId,
    labels,
    track,
  }) => {
    const created = track(await createSession({ sessionId, image: TEST_IMAGE, labels }));
    const resumed = await resumeSession({ sessionId });
    expect(resumed.ownership).toBe('created');
    expect(resumed.owner).toEqual(created.owner);
    expect(resumed.owner).toMatchObject({ pid: process.pid, liveness: 'alive' });
    expect(resumed.drift).toEqual([]);
  });

  test('absent: E_SESSION_NOT_FOUND, and nothing is created', async ({ sessionId }) => {
    const error = await expectBerthError(resumeSession({ sessionId }), SessionNotFoundError);
    expect(error.details).toMatchObject({ sessionId, name: containerName(sessionId) });
    expect(await inspectContainer(containerName(sessionId))).toBeNull();
  });

  test('the prefix picks the name: a session created under another prefix is not found', async ({ sessionId, labels, track }) => {
    const created = track(await createSession({ sessionId, image: TEST_IMAGE, labels, prefix: 'please' }));
    await expectBerthError(resumeSession({ sessionId }), SessionNotFoundError);
    expect((await resumeSession({ sessionId, prefix: 'please' })).id).toBe(created.id);
  });

  test("a berth container of another session under the name: E_FOREIGN_CONTAINER, and it is left alone", async ({
    sessionId,
    labels,
    track,
    handMade,
  }) => {
    // A real berth container for `other`, whose labels are copied onto a container named for `sessionId`.
    const other = `${sessionId}-other`;
    const original = track(await createSession({ sessionId: other, image: TEST_IMAGE, labels }));
    const berthLabels = Object.fromEntries(
      Object.entries((await inspectContainer(original.id))!.Config.Labels as Record<string, string>).filter(([k]) =>
        k.startsWith('dev.berth.'),
      ),
    );
    expect(berthLabels['dev.berth.session-id']).toBe(other);
    const impostor = await handMade(containerName(sessionId), { labels: berthLabels });
    const startedAt = (await inspectContainer(impostor))?.State.StartedAt;

    const foreign = await expectBerthError(resumeSession({ sessionId }), ForeignContainerError);
    expect(foreign.details).toMatchObject({ sessionId, name: containerName(sessionId), id: impostor });
    expect(foreign.message).toContain(other);
    const exists = await expectBerthError(createSession({ sessionId, image: TEST_IMAGE, labels }), SessionExistsError);
    expect(exists.details).toMatchObject({ id: impostor, managed: true, sessionId: other });
    expect((await inspectContainer(impostor))?.State).toMatchObject({ Running: true, StartedAt: startedAt });
  });
});
