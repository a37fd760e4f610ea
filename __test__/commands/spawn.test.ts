// session.spawn on the real engine: output streamed in order, back-pressure, kill() of a whole
// tree, timeouts and aborts (case 8), stdin (case 5), zombies (case 9), stream cancel, errors,
// and a Node process that exits on its own after a finished spawn.
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect } from 'vitest';
import { AbortedError, createSession, EngineError, ExecTimeoutError, type Session } from '../../index.mjs';
import { execIn, stopContainer } from '../helpers/engine-http.mjs';
import { processesIn, waitForNoProcess, waitForProcess, waitForTreeKill } from '../helpers/engine-wait.js';
import { expectBerthError, rejectionOf } from '../helpers/expect-error.js';
import { sessionTest as test } from '../helpers/fixtures.js';
import { lastJsonLine, runNode } from '../helpers/node-process.js';
import { testLabels, testSessionId } from '../helpers/run-label.mjs';
import { onPodman } from '../helpers/test-engine.mjs';
import { TEST_IMAGE } from '../helpers/test-image.mjs';
import { engineSuite } from '../helpers/suite.js';

const EXIT_SCRIPT = fileURLToPath(new URL('../scripts/spawn-exit.mjs', import.meta.url));
/** A wait() settles within this of its container's stop, in ms (generous for a loaded 2-core CI machine; the outside-stop watch looks every second). */
const STOP_SETTLE_MS = 15_000;

/** `session.spawn(argv)` through the engine exec (not the command channel): BERTH_COMMAND_CHANNEL=0 around the call. */
async function spawnOverEngine(session: Session, argv: string[]) {
  process.env.BERTH_COMMAND_CHANNEL = '0';
  try {
    return await session.spawn(argv);
  } finally {
    delete process.env.BERTH_COMMAND_CHANNEL;
  }
}

const START_ORPHAN = 'sh -c "while [ ! -e /tmp/orphan-go ]; do sleep 0.05; done" </dev/null >/dev/null 2>&1 & exit 0';

async function text(stream: ReadableStream<Uint8Array>): Promise<string> {
  const chunks: Uint8Array[] = [];
  for await (const chunk of stream) chunks.push(chunk);
  return Buffer.concat(chunks).toString('utf8');
}

/** What `promise` settles with (its value or its rejection), with the rejection handled at once. */
function settled(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    (value) => value,
    (error: unknown) => error,
  );
}

/** Reads `stream` until `needle` appeared; resolves to what was read (the reader is released). */
async function readUntil(stream: ReadableStream<Uint8Array>, needle: string): Promise<string> {
  const reader = stream.getReader();
  let seen = '';
  try {
    while (!seen.includes(needle)) {
      const next = await reader.read();
      if (next.done) throw new Error(`stream ended before ${JSON.stringify(needle)}; got ${JSON.stringify(seen)}`);
      seen += Buffer.from(next.value).toString('utf8');
    }
    return seen;
  } finally {
    reader.releaseLock();
  }
}

engineSuite('spawn', () => {
  let shared: Session;
  beforeAll(async () => {
    shared = await createSession({ sessionId: testSessionId('spawn'), image: TEST_IMAGE, labels: testLabels() });
  });
  afterAll(async () => {
    await shared?.remove();
  });

  test('10,000 lines arrive completely and in order, stderr apart, then the exit code', async () => {
    const p = await shared.spawn([
      'sh',
      '-c',
      'i=1; while [ $i -le 10000 ]; do echo "line $i"; i=$((i+1)); done; echo "to err" >&2; exit 3',
    ]);
    const [out, err] = await Promise.all([text(p.stdout), text(p.stderr)]);
    const lines = out.trimEnd().split('\n');
    expect(lines).toHaveLength(10_000);
    expect(lines.every((line, i) => line === `line ${i + 1}`)).toBe(true);
    expect(err).toBe('to err\n');
    expect(await p.wait()).toEqual({ exitCode: 3, oomKilled: false });
    expect(await p.wait()).toEqual({ exitCode: 3, oomKilled: false });
  });

  test('back-pressure: an unread stdout holds the process back; reading lets it finish', async () => {
    const p = await shared.spawn(['sh', '-c', 'head -c 8388608 /dev/zero; touch /tmp/bp-done']);
    // busybox shows the forked applet as `{head} sh -c ...`.
    await waitForProcess(shared.id, (x) => x.args.startsWith('{head}'));
    // 8 MiB cannot fit in the pipe, the engine's buffers and berth's bounded queue.
    expect((await execIn(shared.id, ['test', '-e', '/tmp/bp-done'])).exitCode).toBe(1);
    let total = 0;
    for await (const chunk of p.stdout) total += chunk.byteLength;
    expect(total).toBe(8 * 1024 * 1024);
    expect(await p.wait()).toEqual({ exitCode: 0, oomKilled: false });
    expect((await execIn(shared.id, ['test', '-e', '/tmp/bp-done'])).exitCode).toBe(0);
  });

  test('kill() ends the process and its children, is idempotent, and wait() gives the real exit code', async () => {
    const p = await shared.spawn(['sh', '-c', 'sleep 1101 & sleep 1102 & echo started; wait']);
    await readUntil(p.stdout, 'started');
    await waitForProcess(shared.id, 'sleep 1101');
    await waitForProcess(shared.id, 'sleep 1102');
    await p.kill();
    await p.kill();
    await waitForNoProcess(shared.id, (x) => ['sleep 1101', 'sleep 1102'].includes(x.args));
    const { exitCode } = await p.wait();
    expect([143, 137]).toContain(exitCode);
    await p.kill();
  });

  test('kill() of a process whose streams nobody reads still ends it (no reader holds a killed exec open)', async () => {
    const p = await shared.spawn(['sh', '-c', 'while :; do echo flood; echo flood >&2; done']);
    // Its queues fill and the engine holds it back; nobody reads.
    await waitForProcess(shared.id, (x) => x.args.includes('echo flood'));
    await p.kill();
    expect((await p.wait()).exitCode).not.toBe(0);
    await waitForNoProcess(shared.id, (x) => x.args.includes('echo flood'));
  });

  test('a cancelled stdout is discarded, so an endless writer does not stall; kill() ends it', async () => {
    const p = await shared.spawn(['sh', '-c', 'echo first; while :; do echo y; done']);
    await readUntil(p.stdout, 'first');
    await p.stdout.cancel();
    await waitForProcess(shared.id, (x) => x.args.includes('while :'));
    await p.kill();
    expect((await p.wait()).exitCode).not.toBe(0);
    await waitForNoProcess(shared.id, (x) => x.args.includes('while :'));
  });

  test('timeoutMs: wait() and the streams reject E_EXEC_TIMEOUT with the output so far; no sleep is left (case 8)', async () => {
    const p = await shared.spawn(['sh', '-c', 'echo started; sleep 1000 & sleep 1000'], { timeoutMs: 500 });
    const stdout = settled(text(p.stdout));
    const error = await expectBerthError(p.wait(), ExecTimeoutError);
    expect(error.details).toMatchObject({ timeoutMs: 500, container: shared.name });
    expect(error.details.stdout?.toString()).toBe('started\n');
    expect(await stdout).toBeInstanceOf(ExecTimeoutError);
    // The tree kill runs after wait() settled: wait for it to finish, then only the keep-alive is left.
    await waitForNoProcess(shared.id, (x) => x.args.startsWith('sleep 1000'));
    await waitForTreeKill(shared.id);
    expect((await processesIn(shared.id)).filter((x) => x.args.startsWith('sleep'))).toEqual([
      expect.objectContaining({ args: 'sleep 2147483647' }),
    ]);
  });

  test('abortSignal: aborting a running process kills its tree and rejects E_ABORTED', async () => {
    const controller = new AbortController();
    const p = await shared.spawn(['sh', '-c', 'echo hi; sleep 1201'], { abortSignal: controller.signal });
    const stderr = settled(text(p.stderr));
    await readUntil(p.stdout, 'hi');
    await waitForProcess(shared.id, 'sleep 1201');
    controller.abort();
    const error = await expectBerthError(p.wait(), AbortedError);
    expect(error.details.stdout?.toString()).toBe('hi\n');
    expect(await stderr).toBeInstanceOf(AbortedError);
    await waitForNoProcess(shared.id, 'sleep 1201');
  });

  test('an already-aborted signal rejects before anything starts', async () => {
    const controller = new AbortController();
    controller.abort();
    await expectBerthError(shared.spawn(['sh', '-c', 'touch /tmp/never-spawned'], { abortSignal: controller.signal }), AbortedError);
    expect((await execIn(shared.id, ['test', '-e', '/tmp/never-spawned'])).exitCode).toBe(1);
  });

  test('stdin is written then closed, so cat ends; a process that never reads it still ends (case 5)', async () => {
    const cat = await shared.spawn(['cat'], { stdin: 'hello\nstdin' });
    expect(await text(cat.stdout)).toBe('hello\nstdin');
    expect(await cat.wait()).toEqual({ exitCode: 0, oomKilled: false });
    const ignoring = await shared.spawn(['sh', '-c', 'echo ignoring; exit 4'], { stdin: randomBytes(4 * 1024 * 1024) });
    // On the engine exec path Podman resets the connection of a process that exits with its
    // stdin unread and sometimes drops its last output (podman #7360; README, Podman): the exit
    // code stays. Over the command channel (the default) stdin is a file: the output is kept.
    if (onPodman() && process.env.BERTH_COMMAND_CHANNEL === '0') expect(['ignoring\n', '']).toContain(await text(ignoring.stdout));
    else expect(await text(ignoring.stdout)).toBe('ignoring\n');
    expect(await ignoring.wait()).toEqual({ exitCode: 4, oomKilled: false });
  });

  test('zombies: a spawned shell that leaves an orphan; once it exits nothing is left in state Z (case 9)', async ({
    sessionId,
    labels,
    track,
  }) => {
    const session = track(await createSession({ sessionId, image: TEST_IMAGE, labels }));
    const p = await session.spawn(['sh', '-c', START_ORPHAN]);
    expect(await p.wait()).toEqual({ exitCode: 0, oomKilled: false });
    const orphan = await waitForProcess(session.id, (x) => x.args.includes('/tmp/orphan-go'));
    await execIn(session.id, ['touch', '/tmp/orphan-go']);
    await waitForNoProcess(session.id, (x) => x.pid === orphan.pid);
    expect((await processesIn(session.id)).filter((x) => x.stat.startsWith('Z'))).toEqual([]);
  });

  test('engine exec with unread output: wait() settles with E_ENGINE when session.stop() stops its container', async ({ sessionId, labels, track, session }) => {
    const p = await spawnOverEngine(session, ['yes']);
    await waitForProcess(session.id, 'yes');
    // Its queues fill and the engine holds it back; nobody reads.
    const stoppedAt = performance.now();
    const waited = settled(p.wait());
    expect(await session.stop()).toEqual({ stopped: true });
    const error = await waited;
    expect(error).toBeInstanceOf(EngineError);
    expect((error as EngineError).message).toMatch(/stopped or was removed/);
    expect(performance.now() - stoppedAt).toBeLessThan(STOP_SETTLE_MS);
    // The same answer again; streams end; kill() after the end is harmless.
    await expectBerthError(p.wait(), EngineError);
    await p.kill();
  });

  test('unread output: wait() settles with E_ENGINE when the container is stopped outside berth (engine exec and command channel)', async ({
    sessionId,
    labels,
    track,
  }) => {
    const overEngine = track(await createSession({ sessionId, image: TEST_IMAGE, labels }));
    const overChannel = track(await createSession({ sessionId: testSessionId('spawn-stop-ch'), image: TEST_IMAGE, labels }));
    const processes = [await spawnOverEngine(overEngine, ['yes']), await overChannel.spawn(['yes'])];
    await waitForProcess(overEngine.id, 'yes');
    await waitForProcess(overChannel.id, 'yes');
    const stoppedAt = performance.now();
    const waits = processes.map((p) => settled(p.wait()).then((r) => [r, performance.now() - stoppedAt] as const));
    // `POST /containers/{id}/stop?t=0` through the engine API, by id, as `docker stop -t 0` would.
    const stops = [overEngine, overChannel].map((s) => stopContainer(s.id).then(() => performance.now() - stoppedAt));
    const stopMs = await Promise.all(stops);
    const settledMs: number[] = [];
    for (const waited of waits) {
      const [result, ms] = await waited;
      expect(result).toBeInstanceOf(EngineError);
      settledMs.push(ms);
    }
    console.info(`[berth tests] stopped outside berth: stop calls took ${stopMs.map(Math.round)} ms; wait() settled after ${settledMs.map(Math.round)} ms (engine exec, channel)`);
    expect(Math.max(...settledMs)).toBeLessThan(STOP_SETTLE_MS);
  });

  test('kill({ abortSignal }): an abort rejects E_ABORTED at once; a later kill() ends the process', async () => {
    const p = await shared.spawn(['sh', '-c', 'sleep 1301']);
    await waitForProcess(shared.id, 'sleep 1301');
    const before = new AbortController();
    before.abort();
    await expectBerthError(p.kill({ abortSignal: before.signal }), AbortedError);
    const controller = new AbortController();
    const killing = p.kill({ abortSignal: controller.signal });
    controller.abort();
    await expectBerthError(killing, AbortedError);
    await p.kill();
    expect([143, 137]).toContain((await p.wait()).exitCode);
    await waitForNoProcess(shared.id, 'sleep 1301');
    expect(await rejectionOf(p.kill({ abortSignal: 'nope' as unknown as AbortSignal }))).toMatchObject({ code: 'E_INVALID_ARGUMENT' });
  });

  test('spawn in a stopped container: E_ENGINE 409; a bad argv: E_INVALID_ARGUMENT', async ({ sessionId, labels, track, session }) => {
    await session.stop({ timeoutMs: 0 });
    const error = await expectBerthError(session.spawn(['true']), EngineError);
    expect(error.details).toMatchObject({ status: 409 });
    expect(await rejectionOf(session.spawn([]))).toMatchObject({ code: 'E_INVALID_ARGUMENT' });
  });

  test('a Node process with a spawned-and-finished exec exits on its own', async ({ sessionId, labels }) => {
    const run = await runNode([EXIT_SCRIPT], { BERTH_EXIT_SESSION: sessionId, BERTH_EXIT_LABELS: JSON.stringify(labels) }, 60_000);
    expect(run, run.stderr).toMatchObject({ code: 0, killed: false });
    expect(lastJsonLine(run)).toEqual({ stdout: 'spawned\n', exitCode: 0, unread: 0 });
  });
});
