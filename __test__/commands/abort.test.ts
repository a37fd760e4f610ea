// AbortSignal on the real engine. Each abort waits until the engine shows the request under
// way (the container exists, the process runs): never a bare timer.
import { expect } from 'vitest';
import { AbortedError, containerName, createSession, peek, resumeSession } from '../../index.mjs';
import { inspectContainer, inspectVolume } from '../helpers/engine-http.mjs';
import { processesIn, waitForNoProcess, waitForProcess, waitForRunningContainer } from '../helpers/engine-wait.js';
import { expectBerthError } from '../helpers/expect-error.js';
import { sessionTest as test } from '../helpers/fixtures.js';
import { listRunContainers } from '../helpers/leak-check.mjs';
import { TEST_IMAGE } from '../helpers/test-image.mjs';
import { engineSuite } from '../helpers/suite.js';

/** An already-aborted signal with a recognisable reason. */
function abortedSignal(): AbortSignal {
  const controller = new AbortController();
  controller.abort(new Error('gave up before starting'));
  return controller.signal;
}

engineSuite('abort', () => {

  test('abort while setup runs: E_ABORTED, and the container it created is removed', async ({ sessionId, labels }) => {
    const controller = new AbortController();
    const creating = createSession({ sessionId, image: TEST_IMAGE, labels, setupCommands: [['sleep', '1004']], abortSignal: controller.signal });
    creating.catch(() => {}); // asserted below
    const { Id: id } = await waitForRunningContainer(containerName(sessionId));
    await waitForProcess(id, 'sleep 1004');

    controller.abort(new Error('user gave up'));
    const error = await expectBerthError(creating, AbortedError);
    expect(error.details.operation).toBe('createSession');
    expect(error.cause).toBeUndefined();
    expect(await inspectContainer(id)).toBeNull();
    expect(await inspectVolume(`berth-ready-${id}`)).toBeNull();
    expect(await peek(sessionId)).toBeNull();
  });

  test('an already-aborted signal: E_ABORTED with no engine call and no container', async ({ sessionId, labels }) => {
    const before = await listRunContainers();
    const error = await expectBerthError(
      createSession({ sessionId, image: TEST_IMAGE, labels, abortSignal: abortedSignal() }),
      AbortedError,
    );
    expect(error.details.operation).toBe('createSession');
    expect(error.cause).toEqual(new Error('gave up before starting'));
    // With an engine that does not exist the outcome is the same: nothing tried to reach it.
    await expectBerthError(
      createSession({ sessionId, image: TEST_IMAGE, labels, abortSignal: abortedSignal(), socketPath: '/nonexistent.sock' }),
      AbortedError,
    );
    await expectBerthError(resumeSession({ sessionId, abortSignal: abortedSignal(), socketPath: '/nonexistent.sock' }), AbortedError);
    expect(await inspectContainer(containerName(sessionId))).toBeNull();
    expect(await listRunContainers()).toEqual(before);
  });

  test('abort a running exec: E_ABORTED with the output so far, and its processes (a cleared-env child too) are killed', async ({ sessionId, labels, track, session }) => {
    const controller = new AbortController();
    const running = session.exec(['sh', '-c', 'echo started; sleep 1005 & env -i sleep 1010 & sleep 1006'], {
      abortSignal: controller.signal,
    });
    running.catch(() => {}); // asserted below
    await waitForProcess(session.id, 'sleep 1006');

    controller.abort();
    const error = await expectBerthError(running, AbortedError);
    expect(error.details.operation).toBe('exec');
    expect(error.details.stdout).toEqual(Buffer.from('started\n'));
    expect(error.details.stderr).toEqual(Buffer.alloc(0));
    await waitForNoProcess(session.id, (p) => ['sleep 1005', 'sleep 1006', 'sleep 1010'].includes(p.args));
    // The session itself is untouched.
    expect((await session.exec(['true'])).exitCode).toBe(0);
    expect((await processesIn(session.id)).map((p) => p.args)).toContain('sleep 2147483647');
  });

  test('an exec with an already-aborted signal never starts', async ({ sessionId, labels, track, session }) => {
    const error = await expectBerthError(session.exec(['touch', '/tmp/ran'], { abortSignal: abortedSignal() }), AbortedError);
    expect(error.details.operation).toBe('exec');
    expect((await session.exec(['test', '-e', '/tmp/ran'])).exitCode).toBe(1);
  });

  test('a signal aborted after the call finished changes nothing', async ({ sessionId, labels, track }) => {
    const controller = new AbortController();
    const session = track(await createSession({ sessionId, image: TEST_IMAGE, labels, abortSignal: controller.signal }));
    controller.abort();
    expect((await inspectContainer(session.id))?.State.Running).toBe(true);
    expect((await session.exec(['true'])).exitCode).toBe(0);
  });
});
