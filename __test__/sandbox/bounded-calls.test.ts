// Every call honours its caller (docs/design.md#engines), and ready means running
// (docs/design.md#readiness), on the real engine:
// - a test engine that accepts and never answers (helpers/hung-engine.mjs) and a proxy in front
//   of the real engine that stops answering (helpers/engine-proxy.mjs `hangAll`): each call
//   settles within SETTLE_MS of its own deadline or abort, with the right code;
// - a proxy that forwards one create and loses its answer (`drop`): the container the engine made
//   is found by its creation nonce label and removed by id once the engine answers again, and the
//   session id is free again;
// - an entrypoint that cannot start or exits at once: E_SETUP_FAILED with the exit code and the log
//   tail, and nothing left.
//
// Timing: an abort is measured from the moment it fired (the `abort` event), a deadline from the
// call, so a slow test machine delays the start of the measurement, not its result.
import { afterAll, beforeAll, expect } from 'vitest';
import {
  AbortedError,
  containerName,
  createSession,
  EngineUnavailableError,
  ExecTimeoutError,
  listSessions,
  listTemplates,
  pruneTemplates,
  peek,
  recreateSession,
  removeTemplate,
  resumeSession,
  SetupFailedError,
  verifySession,
  type Session,
} from '../../index.mjs';
import { createContainerHandle } from '../../container.mjs';
import { createDockerSandboxProvider } from '../../harness.mjs';
import { inspectContainer, labelFilter, listContainers } from '../helpers/engine-http.mjs';
import { request, startEngineProxy } from '../helpers/engine-proxy.mjs';
import { startHungEngine } from '../helpers/hung-engine.mjs';
import { expectBerthError } from '../helpers/expect-error.js';
import { sessionTest as test } from '../helpers/fixtures.js';
import { TEST_IMAGE } from '../helpers/test-image.mjs';
import { engineSuite } from '../helpers/suite.js';

/** The bound the issue names: a deadline or an abort settles the call within this, in ms. */
const SETTLE_MS = 100;
/** kill()'s bound past the process's deadline or signal on a hung engine, in ms (several processes settle at once there). */
const KILL_SETTLE_MS = 1000;
/** When the tests abort, in milliseconds after the call (the request is in flight by then). */
const ABORT_AFTER_MS = 300;

/** Starts `call` with a signal, aborts it after ABORT_AFTER_MS; it must reject `Class` within SETTLE_MS of the abort. */
async function abortSettles(
  call: (abortSignal: AbortSignal) => Promise<unknown>,
  Class: Parameters<typeof expectBerthError>[1] = AbortedError,
): Promise<{ details: Record<string, unknown> }> {
  const controller = new AbortController();
  let abortedAt = Number.NaN;
  controller.signal.addEventListener('abort', () => (abortedAt = performance.now()), { once: true });
  const pending = call(controller.signal);
  pending.catch(() => {}); // asserted below
  const timer = setTimeout(() => controller.abort(), ABORT_AFTER_MS);
  let error: { details: Record<string, unknown> };
  try {
    error = (await expectBerthError(pending, Class)) as unknown as { details: Record<string, unknown> };
  } finally {
    clearTimeout(timer);
  }
  const took = performance.now() - abortedAt;
  expect(took, `settled ${Math.round(took)} ms after the abort`).toBeLessThan(SETTLE_MS);
  return error;
}

/** `call` (with `timeoutMs`) must reject E_EXEC_TIMEOUT within SETTLE_MS of its deadline. */
async function deadlineSettles(timeoutMs: number, call: () => Promise<unknown>): Promise<ExecTimeoutError> {
  const started = performance.now();
  const error = await expectBerthError(call(), ExecTimeoutError);
  const late = performance.now() - started - timeoutMs;
  expect(late, `settled ${Math.round(late)} ms after the deadline`).toBeLessThan(SETTLE_MS);
  return error;
}

/** Containers (any state) carrying the labels, on the real engine. */
async function containersWith(labels: Record<string, string>): Promise<{ Id: string; State: string }[]> {
  return listContainers(labelFilter(labels));
}

/** Polls until no container carries `labels` (berth's background cleanup), for up to `ms`. */
async function expectNoneLeft(labels: Record<string, string>, ms = 20_000): Promise<void> {
  const end = Date.now() + ms;
  let left = await containersWith(labels);
  while (left.length > 0 && Date.now() < end) {
    await new Promise((r) => setTimeout(r, 250));
    left = await containersWith(labels);
  }
  expect(left).toEqual([]);
}

engineSuite('a hung engine (accepts, never answers)', () => {
  let hung: Awaited<ReturnType<typeof startHungEngine>>;
  beforeAll(async () => {
    hung = await startHungEngine();
  });
  afterAll(async () => {
    await hung?.close();
  });

  test('every entry point settles at the abort with E_ABORTED', async ({ sessionId, labels }) => {
    const socketPath = hung.socketPath;
    await abortSettles((abortSignal) => createSession({ sessionId, image: TEST_IMAGE, labels, socketPath, abortSignal }));
    await abortSettles((abortSignal) => resumeSession({ sessionId, socketPath, abortSignal }));
    await abortSettles((abortSignal) => peek(sessionId, { socketPath, abortSignal }));
    await abortSettles((abortSignal) => listSessions({ labels, socketPath, abortSignal }));
    await abortSettles((abortSignal) => verifySession(sessionId, { socketPath, abortSignal }));
    await abortSettles((abortSignal) => recreateSession({ sessionId, image: TEST_IMAGE, labels, socketPath, abortSignal }));
    await abortSettles((abortSignal) => listTemplates({ socketPath, abortSignal }));
    await abortSettles((abortSignal) => removeTemplate('k', { socketPath, abortSignal }));
    // The error names the call the caller made, not the step it stopped in.
    expect((await abortSettles((abortSignal) => pruneTemplates({ socketPath, abortSignal }))).details.operation).toBe('pruneTemplates');
    // The harness provider and the drop-in pass their callers' signals down.
    const provider = createDockerSandboxProvider({ image: TEST_IMAGE, labels, socketPath });
    await abortSettles(async (abortSignal) => provider.createSession({ sessionId, abortSignal }));
    await abortSettles(async (abortSignal) => provider.resumeSession?.({ sessionId, abortSignal }));
    const handle = createContainerHandle(sessionId, { image: TEST_IMAGE, labels, socketPath });
    await abortSettles((abortSignal) => handle.ready({ abortSignal }));
    await abortSettles((abortSignal) => handle.hostAddress(80, { abortSignal }));
    await abortSettles((abortSignal) => handle.peek({ abortSignal }));
    // They reached the hung engine (this is not a check before any engine call).
    expect(hung.requests.some((r) => r.path.startsWith('/images/') || r.path.startsWith('/containers/'))).toBe(true);
  });
});

engineSuite('a session whose engine stops answering', () => {
  let proxy: Awaited<ReturnType<typeof startEngineProxy>>;
  let session: Session;
  beforeAll(async () => {
    proxy = await startEngineProxy();
  });
  afterAll(async () => {
    proxy?.recover();
    await session?.remove({ force: true }).catch((error: unknown) => console.error('[berth tests]', error));
    await proxy?.close();
  });

  test('each call settles by its deadline or abort; the duty survives', async ({ sessionId, labels }) => {
    // No file call before the hang: the file channel (a long-lived exec) is not open yet.
    session = await createSession({
      sessionId,
      image: TEST_IMAGE,
      labels,
      socketPath: proxy.socketPath,
      setupCommands: ['echo x > /tmp/present'],
    });
    const socketPath = proxy.socketPath;
    proxy.hangAll();
    try {
      // The setup commands opened the session's command channel (one exec, already attached):
      // a command over it needs no engine request, so it still runs while the engine hangs.
      expect((await session.exec(['echo', 'over the channel'], { timeoutMs: 5000 })).stdout.toString()).toBe('over the channel\n');
      // A user without a channel yet needs the engine (a channel's exec, or the exec path):
      // exec's timeoutMs covers exec create and start, not only the read loop.
      const timedOut = await deadlineSettles(1000, () => session.exec(['true'], { timeoutMs: 1000, user: '1234' }));
      expect(timedOut.details).toMatchObject({ timeoutMs: 1000 });
      await abortSettles((abortSignal) => session.exec(['true'], { abortSignal, user: '1234' }));
      // spawn: the start itself is bounded by timeoutMs and by the signal (over the channel
      // or not, the call settles by its deadline or abort).
      await deadlineSettles(1000, async () => (await session.spawn(['sleep', '100'], { timeoutMs: 1000 })).wait());
      await abortSettles(async (abortSignal) => (await session.spawn(['sleep', '100'], { abortSignal })).wait());
      await deadlineSettles(1000, async () => (await session.spawn(['sleep', '100'], { timeoutMs: 1000, user: '1234' })).wait());
      await abortSettles(async (abortSignal) => (await session.spawn(['sleep', '100'], { abortSignal, user: '1234' })).wait());
      await abortSettles((abortSignal) => session.readFile('/tmp/present', { abortSignal }));
      await abortSettles((abortSignal) => session.openFile('/tmp/present', { abortSignal }));
      // A small write goes over the command channel (no engine request): it still works.
      await session.writeFile('/tmp/small', 'y', { abortSignal: AbortSignal.timeout(5000) });
      // A write past the channel's frame (1 MiB) needs the engine: bounded by the signal.
      await abortSettles((abortSignal) => session.writeFile('/tmp/other', Buffer.alloc(2 * 1024 * 1024), { abortSignal }));
      await abortSettles((abortSignal) => session.workingDirectory({ abortSignal }));
      await abortSettles((abortSignal) => session.hostAddress(80, { abortSignal }));
      await abortSettles((abortSignal) => session.setTimeout(60_000, { abortSignal }));
      await abortSettles((abortSignal) => session.stop({ abortSignal }));
      await abortSettles((abortSignal) => session.remove({ abortSignal }));
      // The entry points, through the same hung proxy.
      await abortSettles((abortSignal) => peek(sessionId, { socketPath, abortSignal }));
      await abortSettles((abortSignal) => resumeSession({ sessionId, socketPath, abortSignal }));
      await abortSettles((abortSignal) => verifySession(sessionId, { socketPath, abortSignal }));
      await abortSettles((abortSignal) => recreateSession({ sessionId, image: TEST_IMAGE, labels, socketPath, abortSignal }));
    } finally {
      proxy.recover();
    }
    // Nothing changed on the way: the session is still running under its name.
    expect((await peek(sessionId))?.state).toBe('running');
    // The aborted remove kept the duty: removing again removes.
    expect(await session.remove()).toEqual({ removed: true });
    expect(await inspectContainer(session.id)).toBeNull();
  });

  test('an engine that stops forwarding on open connections too: a command over the channel settles by its deadline or abort', async ({
    sessionId,
    labels,
    track,
  }) => {
    const s = track(await createSession({ sessionId, image: TEST_IMAGE, labels, socketPath: proxy.socketPath }));
    expect((await s.exec(['echo', 'over the channel'])).stdout.toString()).toBe('over the channel\n');
    proxy.hangAll({ existing: true });
    try {
      // The helper's answer to the start never comes: the 10 s bound on it is only an upper one.
      await deadlineSettles(1000, () => s.exec(['true'], { timeoutMs: 1000 }));
      await abortSettles((abortSignal) => s.exec(['true'], { abortSignal }));
      await deadlineSettles(1000, async () => (await s.spawn(['sleep', '100'], { timeoutMs: 1000 })).wait());
      await abortSettles(async (abortSignal) => (await s.spawn(['sleep', '100'], { abortSignal })).wait());
    } finally {
      proxy.recover();
    }
    expect((await s.exec(['echo', 'after'])).stdout.toString()).toBe('after\n');
  });

  test('a spawned process whose engine stops answering: wait() settles at its timeoutMs', async ({ sessionId, labels, track }) => {
    const s = track(await createSession({ sessionId, image: TEST_IMAGE, labels, socketPath: proxy.socketPath }));
    const started = performance.now();
    const p = await s.spawn(['sleep', '100'], { timeoutMs: 1500 });
    proxy.hangAll();
    try {
      await expectBerthError(p.wait(), ExecTimeoutError);
      const late = performance.now() - started - 1500;
      expect(late, `settled ${Math.round(late)} ms after the deadline`).toBeLessThan(SETTLE_MS);
    } finally {
      proxy.recover();
    }
  });

  test('kill() while the engine stops answering: kill() and wait() settle by the process\'s timeoutMs or its signal, not by the tree kill\'s own bounds', async ({
    sessionId,
    labels,
    track,
  }) => {
    const s = track(await createSession({ sessionId, image: TEST_IMAGE, labels, socketPath: proxy.socketPath }));
    // The tree kill is an engine exec, which hangs: the process goes on, and the wait for its
    // end and for the kill stops at its deadline (over the channel, opened before the hang, and
    // through the engine: stdin over the channel's limit) or at its spawn's signal.
    const overChannelAt = performance.now();
    const overChannel = await s.spawn(['sleep', '100'], { timeoutMs: 2000 });
    const throughEngineAt = performance.now();
    const throughEngine = await s.spawn(['sleep', '100'], { timeoutMs: 2000, stdin: Buffer.alloc(17 * 1024 * 1024) });
    const controller = new AbortController();
    const signalled = await s.spawn(['sleep', '100'], { abortSignal: controller.signal });
    proxy.hangAll();
    try {
      let abortedAt = Number.NaN;
      controller.signal.addEventListener('abort', () => (abortedAt = performance.now()), { once: true });
      const settled = (p: Promise<void>, from: () => number) => p.then(() => performance.now() - from());
      const kills = [
        settled(overChannel.kill(), () => overChannelAt + 2000),
        settled(throughEngine.kill(), () => throughEngineAt + 2000),
        settled(signalled.kill(), () => abortedAt),
      ];
      setTimeout(() => controller.abort(), ABORT_AFTER_MS);
      const [channelLate, engineLate, abortLate] = await Promise.all(kills);
      console.info(
        `[berth tests] kill() on a hung engine settled ${Math.round(channelLate)} ms (channel) and ${Math.round(engineLate)} ms (engine) after the deadline, ${Math.round(abortLate)} ms after the abort`,
      );
      // A generous bound (hang detection: before the fix each took about 13 s, the tree kill's
      // exec create timing out); the times are logged above.
      expect(channelLate, 'over the channel, after the deadline').toBeLessThan(KILL_SETTLE_MS);
      expect(engineLate, 'through the engine, after the deadline').toBeLessThan(KILL_SETTLE_MS);
      expect(abortLate, 'after the abort').toBeLessThan(KILL_SETTLE_MS);
      await expectBerthError(overChannel.wait(), ExecTimeoutError);
      await expectBerthError(throughEngine.wait(), ExecTimeoutError);
      await expectBerthError(signalled.wait(), AbortedError);
    } finally {
      proxy.recover();
    }
    expect((await s.exec(['echo', 'after'])).stdout.toString()).toBe('after\n');
  });
});

engineSuite('a create whose answer is lost', () => {
  let proxy: Awaited<ReturnType<typeof startEngineProxy>>;
  beforeAll(async () => {
    proxy = await startEngineProxy();
  });
  afterAll(async () => {
    proxy?.recover();
    await proxy?.close();
  });

  test('aborted while the answer is lost: E_ABORTED at the abort; the container is found by its nonce and removed; the id is free', async ({
    sessionId,
    labels,
    track,
  }) => {
    // Abort once the engine made the container and its answer is lost (not on a timer: the
    // create must be in flight).
    const dropped = proxy.drop(request('POST', /^\/containers\/create/));
    const abort = new AbortController();
    const call = createSession({ sessionId, image: TEST_IMAGE, labels, socketPath: proxy.socketPath, abortSignal: abort.signal });
    call.catch(() => {}); // asserted below
    await dropped.forwarded;
    const abortedAt = performance.now();
    abort.abort();
    await expectBerthError(call, AbortedError);
    expect(performance.now() - abortedAt).toBeLessThan(SETTLE_MS);
    // The engine made it, carrying this create's nonce.
    const made = await inspectContainer(containerName(sessionId));
    expect(made?.Config.Labels['dev.berth.create-nonce']).toMatch(/^[0-9a-f]{32}$/);
    // berth's background cleanup removes it by id, through the proxy, now that it answers.
    await expectNoneLeft({ ...labels, 'dev.berth.session-id': sessionId });
    const again = track(await createSession({ sessionId, image: TEST_IMAGE, labels, socketPath: proxy.socketPath }));
    expect(again.ownership).toBe('created');
  });

  test('the engine stops answering after the lost create: nothing is left once the proxy recovers', async ({ sessionId, labels }) => {
    const dropped = proxy.drop(request('POST', /^\/containers\/create/));
    const abort = new AbortController();
    const call = createSession({ sessionId, image: TEST_IMAGE, labels, socketPath: proxy.socketPath, abortSignal: abort.signal });
    call.catch(() => {}); // asserted below
    await dropped.forwarded;
    proxy.hangAll();
    const abortedAt = performance.now();
    abort.abort();
    await expectBerthError(call, AbortedError);
    expect(performance.now() - abortedAt).toBeLessThan(SETTLE_MS);
    // While the proxy hangs, berth cannot remove it: the container is there.
    expect(await containersWith({ ...labels, 'dev.berth.session-id': sessionId })).toHaveLength(1);
    proxy.recover();
    await expectNoneLeft({ ...labels, 'dev.berth.session-id': sessionId });
  });

  test('a connection broken after the create: E_ENGINE_UNAVAILABLE, and the container is removed', async ({ sessionId, labels }) => {
    proxy.drop(request('POST', /^\/containers\/create/), { mode: 'destroy' });
    await expectBerthError(
      createSession({ sessionId, image: TEST_IMAGE, labels, socketPath: proxy.socketPath }),
      EngineUnavailableError,
    );
    await expectNoneLeft({ ...labels, 'dev.berth.session-id': sessionId });
  });
});

engineSuite('ready means running', () => {

  test("entrypoint ['/nope'] rejects E_SETUP_FAILED with the exit code and log tail, and leaves nothing", async ({ sessionId, labels }) => {
    const error = await expectBerthError(createSession({ sessionId, image: TEST_IMAGE, labels, entrypoint: ['/nope'] }), SetupFailedError);
    expect(error.details).toMatchObject({ sessionId, stage: 'start' });
    expect(error.details.exitCode).not.toBe(0);
    expect(typeof error.details.log).toBe('string');
    // The init (Docker) or the runtime (Podman) says why in the log tail, or the engine in `reason`
    // when it refused the start itself.
    expect(`${String(error.details.log)} ${String(error.details.reason ?? '')}`).toMatch(/\/nope|No such file/);
    expect(error.details.state).toBe('exited');
    expect(await inspectContainer(containerName(sessionId))).toBeNull();
    expect(await peek(sessionId)).toBeNull();
    expect(await containersWith({ ...labels, 'dev.berth.session-id': sessionId })).toEqual([]);
  });

  test('an entrypoint that exits at once rejects E_SETUP_FAILED with its exit code and log tail, and leaves nothing', async ({
    sessionId,
    labels,
  }) => {
    const error = await expectBerthError(
      createSession({ sessionId, image: TEST_IMAGE, labels, entrypoint: ['sh', '-c', 'echo goodbye-from-entrypoint >&2; exit 3'] }),
      SetupFailedError,
    );
    expect(error.details).toMatchObject({ sessionId, exitCode: 3, state: 'exited' });
    expect(String(error.details.log)).toContain('goodbye-from-entrypoint');
    expect(await inspectContainer(containerName(sessionId))).toBeNull();
  });

  test('an entrypoint that exits during setup rejects E_SETUP_FAILED and leaves nothing', async ({ sessionId, labels }) => {
    const error = await expectBerthError(
      createSession({
        sessionId,
        image: TEST_IMAGE,
        labels,
        entrypoint: ['sh', '-c', 'sleep 0.3; exit 5'],
        setupCommands: ['sleep 1'],
      }),
      SetupFailedError,
    );
    expect(error.details).toMatchObject({ sessionId });
    expect(await inspectContainer(containerName(sessionId))).toBeNull();
  });
});
