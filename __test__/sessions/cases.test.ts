// Cases 1, 2, 7 and 11 of cases/README.md on the real engine, with A and B as separate OS
// processes (child workers importing the package root).
import { afterEach, expect } from 'vitest';
import { containerName, ForeignContainerError, peek, resumeSession, SessionExistsError, createSession } from '../../index.mjs';
import { callTogether, killAllChildren, startChild, startChildren, type ChildCallError } from '../helpers/child.js';
import { execIn, inspectContainer, labelFilter, listContainers } from '../helpers/engine-http.mjs';
import { expectBerthError, rejectionOf } from '../helpers/expect-error.js';
import { sessionTest as test } from '../helpers/fixtures.js';
import { TEST_IMAGE } from '../helpers/test-image.mjs';
import { engineSuite } from '../helpers/suite.js';

/** Every container (any state) carrying berth's session-id label for `sessionId`. */
function containersOfSession(sessionId: string): Promise<any[]> {
  return listContainers(labelFilter({ 'dev.berth.session-id': sessionId }));
}

/** Exactly-named containers (the name filter alone matches substrings). */
function containersNamed(name: string): Promise<any[]> {
  // `^/?`: Docker matches names with their leading slash, Podman without.
  return listContainers({ name: [`^/?${name}$`] });
}

engineSuite('cases', () => {
  afterEach(killAllChildren);

  test('1: a failed create next to a live session rejects E_SESSION_EXISTS before any setup runs', async ({ sessionId, labels }) => {
    const [a, b] = await startChildren(2);
    const created = await a!.call('createSession', { sessionId, image: TEST_IMAGE, labels });
    const startedAt = (await inspectContainer(created.id))?.State.StartedAt;
    try {
      const failure = (await rejectionOf(
        b!.call('createSession', {
          sessionId,
          image: TEST_IMAGE,
          labels,
          setupCommands: ['touch /tmp/b-setup-ran; exit 1'],
        }),
      )) as ChildCallError;
      expect(failure).toMatchObject({ name: 'SessionExistsError', code: 'E_SESSION_EXISTS' });
      expect(failure.details).toMatchObject({
        name: created.name,
        id: created.id,
        state: 'running',
        managed: true,
        sessionId,
        owner: { pid: a!.pid, liveness: 'alive' },
      });

      // A's container: the same id under the name, running, untouched by B's setup.
      const seen = await inspectContainer(created.name);
      expect(seen?.Id).toBe(created.id);
      expect(seen?.State).toMatchObject({ Status: 'running', Running: true, StartedAt: startedAt });
      expect((await execIn(created.id, ['test', '-e', '/tmp/b-setup-ran'])).exitCode).toBe(1);
      const out = await a!.call('exec', created.handle, ['sh', '-c', 'echo alive']);
      expect(out).toMatchObject({ exitCode: 0 });
      expect(out.stdout.toString()).toBe('alive\n');
      expect(await containersOfSession(sessionId)).toHaveLength(1);
    } finally {
      await a!.call('remove', created.handle);
    }
  });

  test('2: ten processes create one id at once: one wins, nine E_SESSION_EXISTS, nothing removed', async ({ sessionId, labels }) => {
    const children = await startChildren(10);
    const results = await callTogether(children, 'createSession', { sessionId, image: TEST_IMAGE, labels });
    const won = results.flatMap((r, i) => (r.status === 'fulfilled' ? [{ child: children[i]!, session: r.value }] : []));
    try {
      expect(won).toHaveLength(1);
      const winner = won[0]!.session;
      expect(winner).toMatchObject({ sessionId, ownership: 'created', name: containerName(sessionId) });
      const lost = results.flatMap((r) => (r.status === 'rejected' ? [r.reason as ChildCallError] : []));
      expect(lost).toHaveLength(9);
      for (const error of lost) {
        expect(error).toMatchObject({ name: 'SessionExistsError', code: 'E_SESSION_EXISTS' });
        expect(error.details).toMatchObject({ name: winner.name, id: winner.id, managed: true, sessionId });
      }
      // Exactly one container has the name and the session's label: the winner's, still running.
      const named = await containersNamed(winner.name);
      expect(named.map((c) => c.Id)).toEqual([winner.id]);
      expect((await containersOfSession(sessionId)).map((c) => c.Id)).toEqual([winner.id]);
      expect((await inspectContainer(winner.id))?.State.Running).toBe(true);
      expect((await won[0]!.child.call('exec', winner.handle, ['true'])).exitCode).toBe(0);
    } finally {
      for (const { child, session } of won) await child.call('remove', session.handle);
    }
  });

  test('7: somebody else\'s container under our name: E_SESSION_EXISTS (managed: false), E_FOREIGN_CONTAINER, never touched', async ({
    sessionId,
    labels,
    handMade,
  }) => {
    const name = containerName(sessionId);
    const foreignId = await handMade(name);
    const startedAt = (await inspectContainer(foreignId))?.State.StartedAt;
    const b = await startChild();

    const exists = (await rejectionOf(b.call('createSession', { sessionId, image: TEST_IMAGE, labels }))) as ChildCallError;
    expect(exists).toMatchObject({ name: 'SessionExistsError', code: 'E_SESSION_EXISTS' });
    expect(exists.details).toMatchObject({ name, id: foreignId, state: 'running', managed: false, sessionId: null, owner: null });

    const foreign = (await rejectionOf(b.call('resumeSession', { sessionId }))) as ChildCallError;
    expect(foreign).toMatchObject({ name: 'ForeignContainerError', code: 'E_FOREIGN_CONTAINER' });
    expect(foreign.details).toMatchObject({ name, id: foreignId, sessionId });

    // The same from this process, with the classes of the package root.
    const here = await expectBerthError(createSession({ sessionId, image: TEST_IMAGE, labels, setupCommands: ['exit 1'] }), SessionExistsError);
    expect(here.details).toMatchObject({ id: foreignId, managed: false });
    await expectBerthError(resumeSession({ sessionId }), ForeignContainerError);
    expect(await peek(sessionId)).toMatchObject({ id: foreignId, managed: false, sessionId: null, owner: null });

    // No berth call removed or stopped it: same id under the name, still running since it started.
    const after = await inspectContainer(name);
    expect(after?.Id).toBe(foreignId);
    expect(after?.State).toMatchObject({ Status: 'running', Running: true, StartedAt: startedAt });
    expect(await containersNamed(name)).toHaveLength(1);
  });

  test('11: an adopted handle in another process neither stops nor removes the owner\'s container', async ({ sessionId, labels }) => {
    const [a, b] = await startChildren(2);
    const created = await a!.call('createSession', { sessionId, image: TEST_IMAGE, labels });
    const startedAt = (await inspectContainer(created.id))?.State.StartedAt;
    try {
      const resumed = await b!.call('resumeSession', { sessionId });
      expect(resumed).toMatchObject({ id: created.id, ownership: 'adopted', owner: { pid: a!.pid, liveness: 'alive' } });
      // What a framework does after a failed start: stop, then destroy.
      await expect(b!.call('stop', resumed.handle)).resolves.toEqual({ stopped: false, reason: 'not-owner' });
      await expect(b!.call('remove', resumed.handle)).resolves.toEqual({ removed: false, reason: 'not-owner' });

      const seen = await inspectContainer(created.id);
      expect(seen?.State).toMatchObject({ Status: 'running', Running: true, StartedAt: startedAt });
      expect((await a!.call('exec', created.handle, ['true'])).exitCode).toBe(0);
      // B's handle still works for what adopting allows.
      expect((await b!.call('exec', resumed.handle, ['true'])).exitCode).toBe(0);
    } finally {
      await expect(a!.call('remove', created.handle)).resolves.toEqual({ removed: true });
    }
    expect(await inspectContainer(created.id)).toBeNull();
  });
});
