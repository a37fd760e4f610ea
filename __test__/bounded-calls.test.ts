// Every call honours its caller (docs/design.md#engines), and ready means running
// (docs/design.md#readiness), on the real engine:
// - a test engine that accepts and never answers (helpers/hung-engine.mjs) and a proxy in front
//   of the real engine that stops answering (helpers/engine-proxy.mjs `hangAll`): each call
//   settles by its own deadline or abort with the right code;
// - a proxy that forwards one create and loses its answer (`drop`): the container the engine made
//   is found by its creation nonce label and removed by id once the engine answers again, and the
//   session id is free again;
// - an entrypoint that cannot start or exits at once: E_SETUP_FAILED with the exit code and the log
//   tail, and nothing left.
//
// Timing: berth settles an abort or a deadline within a few milliseconds of it. The assertions
// allow SLACK_MS on top, because a loaded 2-core CI machine can delay a timer or the event loop
// by hundreds of milliseconds; a tighter bound would flake without proving more. Speed itself is
// proven only in `npm run bench`.
import { afterAll, beforeAll, describe, expect } from 'vitest';
import {
  AbortedError,
  containerName,
  createSession,
  EngineUnavailableError,
  ExecTimeoutError,
  listSessions,
  peek,
  resumeSession,
  SetupFailedError,
  type Session,
} from '../index.mjs';
import { engineAvailable } from './helpers/engine-available.js';
import { inspectContainer, labelFilter, listContainers } from './helpers/engine-http.mjs';
import { request, startEngineProxy } from './helpers/engine-proxy.mjs';
import { startHungEngine } from './helpers/hung-engine.mjs';
import { expectBerthError } from './helpers/expect-error.js';
import { sessionTest as test } from './helpers/fixtures.js';
import { expectNoLeaks } from './helpers/leak-check.mjs';
import { TEST_IMAGE } from './helpers/test-image.mjs';

/** Slack on top of a deadline or abort for a loaded CI machine (see the header). */
const SLACK_MS = 1500;
/** When the tests abort, in milliseconds after the call. */
const ABORT_AFTER_MS = 300;

/** Asserts that `call()` rejects with `Class` no later than `afterMs` + SLACK_MS after it started. */
async function settlesBy<E extends Error>(
  afterMs: number,
  Class: Parameters<typeof expectBerthError>[1],
  call: () => Promise<unknown>,
): Promise<E> {
  const started = performance.now();
  const error = await expectBerthError(call(), Class);
  const took = performance.now() - started;
  expect(took, `settled after ${Math.round(took)} ms`).toBeLessThan(afterMs + SLACK_MS);
  return error as unknown as E;
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
    if (process.env.BERTH_TEST_DEBUG) console.error('[berth tests] still there:', left.map((c) => c.State));
    await new Promise((r) => setTimeout(r, 250));
    left = await containersWith(labels);
  }
  expect(left).toEqual([]);
}

describe.skipIf(!engineAvailable())('a hung engine (accepts, never answers)', () => {
  let hung: Awaited<ReturnType<typeof startHungEngine>>;
  beforeAll(async () => {
    hung = await startHungEngine();
  });
  afterAll(async () => {
    await hung?.close();
  });

  test('createSession, resumeSession, peek and listSessions settle at the abort with E_ABORTED', async ({ sessionId, labels }) => {
    const socketPath = hung.socketPath;
    const abortSignal = (): AbortSignal => AbortSignal.timeout(ABORT_AFTER_MS);
    await settlesBy(ABORT_AFTER_MS, AbortedError, () =>
      createSession({ sessionId, image: TEST_IMAGE, labels, socketPath, abortSignal: abortSignal() }),
    );
    await settlesBy(ABORT_AFTER_MS, AbortedError, () => resumeSession({ sessionId, socketPath, abortSignal: abortSignal() }));
    await settlesBy(ABORT_AFTER_MS, AbortedError, () => peek(sessionId, { socketPath, abortSignal: abortSignal() }));
    await settlesBy(ABORT_AFTER_MS, AbortedError, () => listSessions({ labels, socketPath, abortSignal: abortSignal() }));
    // They reached the hung engine (this is not a check before any engine call).
    expect(hung.requests.some((r) => r.path.startsWith('/images/') || r.path.startsWith('/containers/'))).toBe(true);
  });
});

describe.skipIf(!engineAvailable())('a session whose engine stops answering', () => {
  let proxy: Awaited<ReturnType<typeof startEngineProxy>>;
  let session: Session;
  beforeAll(async () => {
    proxy = await startEngineProxy();
  });
  afterAll(async () => {
    proxy?.recover();
    await session?.remove({ force: true }).catch((error: unknown) => console.error('[berth tests]', error));
    await proxy?.close();
    await expectNoLeaks();
  });

  test('exec, spawn, files, workingDirectory and remove settle by their deadline or abort; the duty survives', async ({
    sessionId,
    labels,
  }) => {
    // No file call before the hang: the file channel (a long-lived exec) is not open yet.
    session = await createSession({
      sessionId,
      image: TEST_IMAGE,
      labels,
      socketPath: proxy.socketPath,
      setupCommands: ['echo x > /tmp/present'],
    });
    proxy.hangAll();
    try {
      // exec's timeoutMs covers exec create and start, not only the read loop.
      const timedOut = await settlesBy<ExecTimeoutError>(1000, ExecTimeoutError, () =>
        session.exec(['true'], { timeoutMs: 1000 }),
      );
      expect(timedOut.details).toMatchObject({ timeoutMs: 1000 });
      await settlesBy(ABORT_AFTER_MS, AbortedError, () =>
        session.exec(['true'], { abortSignal: AbortSignal.timeout(ABORT_AFTER_MS) }),
      );
      // spawn: the start itself is bounded by timeoutMs; so is wait() of a started process.
      await settlesBy(1000, ExecTimeoutError, async () => (await session.spawn(['sleep', '100'], { timeoutMs: 1000 })).wait());
      await settlesBy(ABORT_AFTER_MS, AbortedError, () =>
        session.readFile('/tmp/present', { abortSignal: AbortSignal.timeout(ABORT_AFTER_MS) }),
      );
      await settlesBy(ABORT_AFTER_MS, AbortedError, () =>
        session.writeFile('/tmp/other', 'y', { abortSignal: AbortSignal.timeout(ABORT_AFTER_MS) }),
      );
      await settlesBy(ABORT_AFTER_MS, AbortedError, () =>
        session.workingDirectory({ abortSignal: AbortSignal.timeout(ABORT_AFTER_MS) }),
      );
      await settlesBy(ABORT_AFTER_MS, AbortedError, () => session.remove({ abortSignal: AbortSignal.timeout(ABORT_AFTER_MS) }));
    } finally {
      proxy.recover();
    }
    // The aborted remove kept the duty: removing again removes.
    expect(await session.remove()).toEqual({ removed: true });
    expect(await inspectContainer(session.id)).toBeNull();
  });

  test('a spawned process whose engine stops answering: wait() settles at its timeoutMs', async ({ sessionId, labels, track }) => {
    const s = track(await createSession({ sessionId, image: TEST_IMAGE, labels, socketPath: proxy.socketPath }));
    const p = await s.spawn(['sleep', '100'], { timeoutMs: 1500 });
    proxy.hangAll();
    try {
      const started = performance.now();
      await expectBerthError(p.wait(), ExecTimeoutError);
      expect(performance.now() - started).toBeLessThan(1500 + SLACK_MS);
    } finally {
      proxy.recover();
    }
  });
});

describe.skipIf(!engineAvailable())('a create whose answer is lost', () => {
  let proxy: Awaited<ReturnType<typeof startEngineProxy>>;
  beforeAll(async () => {
    proxy = await startEngineProxy();
  });
  afterAll(async () => {
    await proxy?.close();
    await expectNoLeaks();
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
    await dropped.forwarded;
    await settlesBy(0, AbortedError, async () => {
      abort.abort();
      return call;
    });
    // The engine made it, carrying this create's nonce.
    const made = await inspectContainer(containerName(sessionId));
    expect(made?.Config.Labels['dev.berth.create-nonce']).toMatch(/^[0-9a-f]{32}$/);
    // berth's background cleanup removes it by id, through the proxy, now that it answers.
    await expectNoneLeft({ ...labels, 'dev.berth.session-id': sessionId });
    const again = track(await createSession({ sessionId, image: TEST_IMAGE, labels, socketPath: proxy.socketPath }));
    expect(again.ownership).toBe('created');
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

describe.skipIf(!engineAvailable())('ready means running', () => {
  afterAll(() => expectNoLeaks());

  test("entrypoint ['/nope'] rejects E_SETUP_FAILED and leaves nothing", async ({ sessionId, labels }) => {
    const error = await expectBerthError(createSession({ sessionId, image: TEST_IMAGE, labels, entrypoint: ['/nope'] }), SetupFailedError);
    expect(error.details).toMatchObject({ sessionId, stage: 'start' });
    expect(error.details.exitCode).not.toBe(0);
    expect(await inspectContainer(containerName(sessionId))).toBeNull();
    expect(await peek(sessionId)).toBeNull();
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
