// Cause of death (docs/operations.md): a session whose container died without berth stopping it
// answers every call with E_SESSION_DEAD and `details.cause`; a command ended by the memory limit
// says `oomKilled: true`; peek, listSessions and `berth ls` show the cause; berth's own stop is
// never taken for a death.
import { afterAll, expect } from 'vitest';
import { createSession, listSessions, peek, resumeSession, SessionDeadError, type Session } from '../../index.mjs';
import { createDockerSandboxProvider } from '../../harness.mjs';
import { runBerth } from '../helpers/berth-cli.js';
import { startChild } from '../helpers/child.js';
import { engineRequest, inspectContainer, removeContainer } from '../helpers/engine-http.mjs';
import { expectBerthError } from '../helpers/expect-error.js';
import { sessionTest as test } from '../helpers/fixtures.js';
import { expectNoRecordLeaks } from '../helpers/records.mjs';
import { testLabels } from '../helpers/run-label.mjs';
import { testSocketPath } from '../helpers/test-engine.mjs';
import { TEST_IMAGE } from '../helpers/test-image.mjs';
import { engineSuite } from '../helpers/suite.js';

const MIB = 1024 * 1024;
const PODMAN = process.env.BERTH_TEST_ENGINE === 'podman';
/** A memory hog: one 128 MiB buffer, touched (well past a 32 MiB limit and its swap). */
const HOG = ['dd', 'if=/dev/zero', 'of=/dev/null', 'bs=128M', 'count=1'];

/** Waits (bounded, for hang detection only) until the container is no longer running. */
async function waitStopped(id: string, socketPath: string): Promise<void> {
  for (let i = 0; i < 300; i++) {
    const c = await inspectContainer(id, { socketPath });
    if (c === null || !c.State.Running) return;
    await new Promise((res) => setTimeout(res, 100));
  }
  throw new Error(`container ${id} still runs`);
}

/** Every session call answers E_SESSION_DEAD with `cause`; returns the exec's error. */
async function expectDead(session: Session, cause: string) {
  const e = await expectBerthError(session.exec(['true']), SessionDeadError);
  expect(e.details).toMatchObject({ cause, sessionId: session.sessionId, id: session.id });
  expect(typeof e.details.logTail).toBe('string');
  expect(Buffer.byteLength(e.details.logTail)).toBeLessThanOrEqual(4096);
  await expectBerthError(session.readFile('/etc/hostname'), SessionDeadError);
  await expectBerthError(session.writeFile('/tmp/x', 'x'), SessionDeadError);
  await expectBerthError(session.spawn(['true']), SessionDeadError);
  return e;
}

engineSuite('cause of death', () => {
  afterAll(async () => {
    await expectNoRecordLeaks();
  });

  test('a memory hog: the command says oomKilled, then the session dies oom-killed', async ({ engine, sessionId, labels, track }) => {
    const session = track(await createSession({ ...engine, sessionId, labels, image: TEST_IMAGE, memoryBytes: 32 * MIB }));
    const hog = await session.exec(HOG);
    expect(hog).toMatchObject({ exitCode: 137, oomKilled: true });
    // A plain SIGKILL with no new OOM kill is not one.
    const killed = await session.exec(['sh', '-c', 'kill -9 $$']);
    expect(killed).toMatchObject({ exitCode: 137, oomKilled: false });
    expect((await session.exec(['true'])).oomKilled).toBe(false);

    // Make the keep-alive the OOM killer's first choice: the next hog ends the container.
    await session.exec(['sh', '-c', 'for c in $(cat /proc/1/task/1/children); do echo 1000 > /proc/$c/oom_score_adj; done']);
    await session.exec(HOG).catch(() => undefined);
    await waitStopped(session.id, engine.socketPath);
    // Podman 4 does not set State.OOMKilled for a container its OOM killer ended (measured here):
    // the engine's answer is a SIGKILL, and berth reports what the engine says (docs/operations.md).
    const cause = PODMAN ? 'killed' : 'oom-killed';
    const e = await expectDead(session, cause);
    expect(e.details.exitCode).toBe(137);
    expect(e.details.finishedAt).toMatch(/^\d{4}-\d\d-\d\dT/);
    const seen = await peek(sessionId, engine);
    expect(seen?.death).toMatchObject({ cause, exitCode: 137 });
  });

  test('a memory hog through spawn, execText and the harness run: each says oomKilled; a plain 137 does not', async ({ sessionId }) => {
    const provider = createDockerSandboxProvider({ image: TEST_IMAGE, labels: testLabels(), memoryBytes: 32 * MIB });
    const sandbox = await provider.createSession({ sessionId });
    try {
      const hog = HOG.join(' ');
      expect(await sandbox.run({ command: hog })).toMatchObject({ exitCode: 137, oomKilled: true });
      expect(await sandbox.run({ command: 'kill -9 $$' })).toMatchObject({ exitCode: 137, oomKilled: false });
      expect(await (await sandbox.spawn({ command: hog })).wait()).toEqual({ exitCode: 137, oomKilled: true });
      expect(await (await sandbox.spawn({ command: 'kill -9 $$' })).wait()).toEqual({ exitCode: 137, oomKilled: false });
      const session = await resumeSession({ sessionId, socketPath: testSocketPath() });
      expect(await session.execText(HOG)).toMatchObject({ exitCode: 137, oomKilled: true });
      expect(await session.execText(['true'])).toMatchObject({ exitCode: 0, oomKilled: false });
      await session.release();
    } finally {
      await sandbox.destroy();
    }
  });

  test('killed from outside (the engine kill): killed, shown by listSessions and berth ls', async ({ engine, sessionId, labels, track, session }) => {
    const r = await engineRequest('POST', `/containers/${session.id}/kill?signal=KILL`, { socketPath: engine.socketPath });
    expect(r.status).toBe(204);
    await waitStopped(session.id, engine.socketPath);
    const e = await expectDead(session, 'killed');
    expect(e.details.exitCode).toBe(137);
    const listed = await listSessions({ ...engine, labels });
    expect(listed.map((s) => s.death?.cause)).toEqual(['killed']);
    const [key, value] = Object.entries(labels)[0]!;
    const ls = await runBerth(['ls', '--label', `${key}=${value}`], { DOCKER_HOST: `unix://${engine.socketPath}` });
    expect(ls.stdout).toContain('(killed, exit 137)');
    const json = JSON.parse((await runBerth(['--json', 'peek', sessionId], { DOCKER_HOST: `unix://${engine.socketPath}` })).stdout);
    expect(json.session.death).toMatchObject({ cause: 'killed', exitCode: 137 });
  });

  test('an init that exits: exited, with its exit code and log tail', async ({ engine, sessionId, labels, track }) => {
    const session = track(
      await createSession({
        ...engine,
        sessionId,
        labels,
        image: TEST_IMAGE,
        entrypoint: ['sh', '-c', 'while [ ! -e /tmp/quit ]; do sleep 0.2; done; echo init says goodbye; exit 3'],
      }),
    );
    await session.writeFile('/tmp/quit', '');
    await waitStopped(session.id, engine.socketPath);
    const e = await expectDead(session, 'exited');
    expect(e.details.exitCode).toBe(3);
    expect(e.details.logTail).toContain('init says goodbye');
  });

  test('removed outside berth: removed-outside; berth\'s own stop is not a death', async ({ engine, sessionId, labels, track }) => {
    const stopped = track(await createSession({ ...engine, sessionId, labels, image: TEST_IMAGE }));
    await stopped.stop({ timeoutMs: 1000 });
    expect((await peek(sessionId, engine))?.death).toBeNull();
    const after = await stopped.exec(['true']).catch((e: unknown) => e);
    expect((after as { code?: string }).code).not.toBe('E_SESSION_DEAD');

    const gone = track(await createSession({ ...engine, sessionId: `${sessionId}-gone`, labels, image: TEST_IMAGE }));
    await removeContainer(gone.id, engine);
    await expectDead(gone, 'removed-outside');
    await expect(gone.remove()).resolves.toEqual({ removed: false, reason: 'absent' });
  });

  test('a command in flight when the container is removed outside berth ends E_SESSION_DEAD on either engine', async ({ engine, sessionId, labels, track, session }) => {
    const inFlight = session.exec(['sleep', '30']);
    inFlight.catch(() => {}); // asserted below; it may settle during the removal, before the await
    // Running over the command channel before the removal.
    for (let i = 0; i < 100 && (await session.exec(['pgrep', '-f', '^sleep 30$'])).exitCode !== 0; i++) {
      await new Promise((res) => setTimeout(res, 50));
    }
    await removeContainer(session.id, engine);
    const e = await expectBerthError(inFlight, SessionDeadError);
    // The engine may show the killed container before it removes it.
    expect(['removed-outside', 'killed']).toContain(e.details.cause);
  });

  test('a command in flight when another process removes the session through berth ends coded or by the kill, never a bare E_ENGINE', async ({ engine, session }) => {
    const inFlight = session.exec(['sleep', '30']);
    inFlight.catch(() => {});
    for (let i = 0; i < 100 && (await session.exec(['pgrep', '-f', '^sleep 30$'])).exitCode !== 0; i++) {
      await new Promise((res) => setTimeout(res, 50));
    }
    const other = await startChild();
    try {
      const resumed = await other.call('resumeSession', { sessionId: session.sessionId, socketPath: engine.socketPath });
      await other.call('remove', resumed.handle, { force: true });
    } finally {
      await other.exit();
    }
    const outcome = await inFlight.then(
      (r) => ({ exitCode: r.exitCode }),
      (error: unknown) => {
        const e = error as { code?: string; details?: { cause?: string } };
        return { code: e.code, cause: e.details?.cause };
      },
    );
    // Never a bare E_ENGINE: a coded error, or (Podman stops the container before it removes it,
    // and the command helper reports the kill before it dies) the command's exit by the signal.
    expect([
      { code: 'E_SESSION_NOT_FOUND', cause: undefined },
      { code: 'E_SESSION_DEAD', cause: 'removed-outside' },
      { code: 'E_SESSION_DEAD', cause: 'killed' },
      { exitCode: 137 },
      { exitCode: 143 },
    ]).toContainEqual(outcome);
  });
});
