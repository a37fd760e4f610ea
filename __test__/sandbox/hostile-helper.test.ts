// A forged command helper (docs/design.md#exec, "Command channel"): the sandbox's root replaces
// berth's helper binary under /run/berth with a shell script, kills the genuine helper, and the
// next command opens a channel to the forgery. Each case: the host's RSS stays bounded, every
// call settles within a bound, the forgery's processes are killed, the engine connection it held
// is closed (sockets of this process, from /proc/self/fd), and the session's later commands work
// (the user backs off to the engine exec). Beside it: an argv or env over the request limit is
// refused before any engine request (counted through a proxy), on both paths and through the
// harness, naming the part and the limit, and a concurrent command on the shared channel still works.
//
// Bounds (generous for a loaded 2-core CI machine): a deadline or abort settles within 1 s of
// itself (each logs how late it was; the design's aim is well under 200 ms); a helper that
// stopped answering costs later commands no wait (they take the engine path); an unanswered
// start is given up after 10 s in the background, a half-sent frame after 5 s; the host's RSS
// grows less than 200 MiB in any case.
import { readdirSync, readlinkSync } from 'node:fs';
import { afterAll, beforeAll, expect, vi } from 'vitest';
import { AbortedError, createSession, EngineError, ExecTimeoutError, InvalidArgumentError, type Session } from '../../index.mjs';
import { createDockerSandboxProvider } from '../../harness.mjs';
import { startEngineProxy } from '../helpers/engine-proxy.mjs';
import { execIn } from '../helpers/engine-http.mjs';
import { processesIn, waitForNoProcess } from '../helpers/engine-wait.js';
import { expectBerthError } from '../helpers/expect-error.js';
import { sessionTest as test } from '../helpers/fixtures.js';
import { TEST_IMAGE } from '../helpers/test-image.mjs';
import { engineSuite } from '../helpers/suite.js';

/** Slack over a deadline, an abort or a helper bound, in ms (a loaded CI machine). */
const SLACK_MS = 1000;
/** Host RSS growth allowed in any case, in bytes (the issue's target). */
const RSS_BOUND = 200 * 1024 * 1024;

const HELLO = 16;
const STARTED = 17;
const STDOUT = 19;

/** One frame's header: `[u32 id][u8 kind][u32 length]`, little-endian. */
function header(id: number, kind: number, length: number): Buffer {
  const b = Buffer.alloc(9);
  b.writeUInt32LE(id, 0);
  b.writeUInt8(kind, 4);
  b.writeUInt32LE(length, 5);
  return b;
}
const frame = (id: number, kind: number, payload: Buffer = Buffer.alloc(0)) => Buffer.concat([header(id, kind, payload.length), payload]);
/** `printf` octal escapes writing `bytes` exactly (busybox sh). */
const printf = (bytes: Buffer) => `printf '${[...bytes].map((b) => `\\${b.toString(8).padStart(3, '0')}`).join('')}'`;

const hello = printf(frame(0, HELLO, Buffer.from('berth-agent/1')));
/** Waits for the first byte of the first START (so stream 1 exists on the host), then says STARTED for it. */
const started = `head -c 1 >/dev/null; ${printf(frame(1, STARTED))}`;

/** The forgeries, as shell scripts; each ends in a `sleep 10xx` the test looks for. */
const FORGED = {
  garbage: `printf 'this is not a frame, nor is what follows\\n'; head -c 4096 /dev/urandom; exec sleep 1031`,
  hugeLength: `${hello}; ${started}; ${printf(header(1, STDOUT, 0x7fffffff))}; exec sleep 1032`,
  silentAfterHello: `${hello}; exec sleep 1033`,
  mute: `exec sleep 1036`,
  floodPastCredit: `${hello}; ${started}; { ${printf(header(1, STDOUT, 65536))}; head -c 65536 /dev/zero; } > /tmp/frame; while :; do cat /tmp/frame; done`,
  partialFrame: `${hello}; ${started}; ${printf(header(1, STDOUT, 100).subarray(0, 5))}; exec sleep 1035`,
};

/** This process's open sockets (engine connections among them). */
function sockets(): number {
  let n = 0;
  for (const fd of readdirSync('/proc/self/fd')) {
    try {
      if (readlinkSync(`/proc/self/fd/${fd}`).startsWith('socket:')) n++;
    } catch {
      // closed meanwhile
    }
  }
  return n;
}

/** Kills berth's genuine helpers in container `id` (outside berth). */
const KILL_HELPERS =
  'for p in /proc/[0-9]*; do tr "\\0" " " < $p/cmdline 2>/dev/null | grep -q "^/run/berth/agen[t]-" && kill -9 ${p#/proc/}; done; exit 0';

/**
 * A session whose helper the sandbox's root replaced with `script` (after berth installed its
 * own and opened a channel with it), and whose genuine helper it killed: the next command opens
 * a channel to the forgery.
 */
async function forged(session: Session, script: string): Promise<void> {
  expect((await session.exec(['echo', 'genuine'])).stdout.toString()).toBe('genuine\n');
  const path = (await execIn(session.id, ['sh', '-c', 'ls /run/berth/agent-*'])).stdout.trim();
  expect(path).toMatch(/^\/run\/berth\/agent-[0-9a-f]{16}$/);
  const forge = await execIn(session.id, ['sh', '-c', 'rm -f "$1" && printf "%s\\n" "#!/bin/sh" "$2" > "$1" && chmod 755 "$1"', 'forge', path, script]);
  expect(forge.exitCode).toBe(0);
  await execIn(session.id, ['sh', '-c', KILL_HELPERS]);
  await waitForNoProcess(session.id, (p) => p.args.startsWith('/run/berth/agent-'));
}

/** Runs `fn`; it must settle within `ms` (plus SLACK_MS) with host RSS under RSS_BOUND over its start. */
async function bounded<T>(ms: number, fn: () => Promise<T>): Promise<T> {
  const rss = process.memoryUsage.rss();
  let peak = rss;
  const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage.rss())), 50);
  const start = performance.now();
  try {
    return await fn();
  } finally {
    clearInterval(sampler);
    peak = Math.max(peak, process.memoryUsage.rss());
    const took = performance.now() - start;
    console.info(`[berth tests] settled after ${Math.round(took)} ms (bound ${ms} + ${SLACK_MS}), RSS +${Math.round((peak - rss) / 1048576)} MiB`);
    expect(took, `settled after ${Math.round(took)} ms`).toBeLessThan(ms + SLACK_MS);
    expect(peak - rss, `RSS grew ${Math.round((peak - rss) / 1048576)} MiB`).toBeLessThan(RSS_BOUND);
  }
}

/** After a forgery: its processes are gone, this process's sockets are back to `before`, later commands work. */
async function nothingLeft(session: Session, sleepArg: string | null, before: number): Promise<void> {
  await waitForNoProcess(session.id, (p) => (sleepArg !== null && p.args === `sleep ${sleepArg}`) || p.args.includes('/run/berth/agent-'));
  await vi.waitFor(() => expect(sockets()).toBeLessThanOrEqual(before), { timeout: 10_000, interval: 100 });
  for (const text of ['later', 'and later']) {
    const out = await bounded(5000, () => session.exec(['echo', text]));
    expect(out).toMatchObject({ exitCode: 0 });
    expect(out.stdout.toString()).toBe(`${text}\n`);
  }
}

/**
 * Two commands at once on a forged channel: one with `timeoutMs` (`deadlineMs`), one aborted
 * after 1 s; each must settle within SLACK_MS of its deadline or abort.
 */
async function deadlineAndAbortSettle(s: Session, deadlineMs: number, what: string): Promise<void> {
  const controller = new AbortController();
  let abortedAt = Number.NaN;
  controller.signal.addEventListener('abort', () => (abortedAt = performance.now()), { once: true });
  const start = performance.now();
  setTimeout(() => controller.abort(), 1000);
  const [deadlineLate, abortLate] = await bounded(deadlineMs, () =>
    Promise.all([
      expectBerthError(s.exec(['echo', 'x'], { timeoutMs: deadlineMs }), ExecTimeoutError).then(() => performance.now() - start - deadlineMs),
      expectBerthError(s.exec(['echo', 'y'], { abortSignal: controller.signal }), AbortedError).then(() => performance.now() - abortedAt),
    ]),
  );
  console.info(`[berth tests] ${what}: E_EXEC_TIMEOUT ${Math.round(deadlineLate)} ms after its deadline, E_ABORTED ${Math.round(abortLate)} ms after the abort`);
  expect(deadlineLate).toBeLessThan(SLACK_MS);
  expect(abortLate).toBeLessThan(SLACK_MS);
}

engineSuite('a forged command helper', () => {

  test('garbage instead of a hello: the command runs through the engine; the forgery is killed', async ({ engine, sessionId, labels, track, session }) => {
    const s = session;
    await forged(s, FORGED.garbage);
    const before = sockets();
    const out = await bounded(10_000, () => s.exec(['echo', 'through the engine']));
    expect(out.stdout.toString()).toBe('through the engine\n');
    await nothingLeft(s, '1031', before);
  });

  test('a claimed length of 2 GiB: the command fails E_ENGINE (command channel) at once; nothing is allocated for it', async ({
    engine,
    sessionId,
    labels,
    track,
  }) => {
    const s = track(await createSession({ ...engine, sessionId, image: TEST_IMAGE, labels }));
    await forged(s, FORGED.hugeLength);
    const before = sockets();
    const error = await bounded(5000, () => expectBerthError(s.exec(['echo', 'x']), EngineError));
    expect(error.details.operation).toBe('command channel');
    expect(error.message).toMatch(/claimed a frame of 2147483647 bytes/);
    await nothingLeft(s, '1032', before);
  });

  test('hello, then silence: a 3 s deadline and a 1 s abort settle on time; later commands take the engine at once, not the 10 s bound', async ({
    engine,
    sessionId,
    labels,
    track,
  }) => {
    const s = track(await createSession({ ...engine, sessionId, image: TEST_IMAGE, labels }));
    await forged(s, FORGED.silentAfterHello);
    const before = sockets();
    // Both go to the forgery together (the channel opens once): neither start is ever answered.
    await deadlineAndAbortSettle(s, 3000, 'silent helper');
    // The channel has left starts unanswered for over a second: later commands do not wait on
    // it (the 10 s bound of the first start condemns it, then the user backs off).
    for (const text of ['after the silence', 'and after']) {
      const out = await bounded(3000, () => s.exec(['echo', text]));
      expect(out.stdout.toString()).toBe(`${text}\n`);
    }
    await nothingLeft(s, '1033', before);
    // Not retried: the forgery is not started again (its user is in back-off).
    expect((await processesIn(s.id)).filter((p) => p.args === 'sleep 1033')).toEqual([]);
  });

  test('no hello at all: a deadline and an abort settle on time; later commands take the engine at once', async ({ engine, sessionId, labels, track, session }) => {
    const s = session;
    await forged(s, FORGED.mute);
    const before = sockets();
    // The second waits for the first's channel to open (bounded by its own signal).
    await deadlineAndAbortSettle(s, 2000, 'mute helper');
    // The hello is still awaited in the background (up to 10 s); commands meanwhile take the engine.
    const out = await bounded(3000, () => s.exec(['echo', 'meanwhile']));
    expect(out.stdout.toString()).toBe('meanwhile\n');
    await nothingLeft(s, '1036', before);
    expect((await processesIn(s.id)).filter((p) => p.args === 'sleep 1036')).toEqual([]);
  });

  // Past its credit, whatever the timing: the command's output is never read (a spawn), so the
  // host grants no credit past the first 256 KiB per stream and the flood must go past it. (A
  // buffered exec reads as fast as the output comes and grants as it reads: a flood within
  // credit is then an endless writer whose KILL the forgery ignores, which is what once took
  // 59 s here; it is bounded now by the kill's end bound, 20 s.)
  test('output past its credit: the command fails E_ENGINE (command channel); host RSS stays bounded', async ({ engine, sessionId, labels, track, session }) => {
    const s = session;
    await forged(s, FORGED.floodPastCredit);
    const before = sockets();
    const error = await bounded(5000, async () => {
      const p = await s.spawn(['true']);
      return expectBerthError(p.wait(), EngineError);
    });
    expect(error.details.operation).toBe('command channel');
    expect(error.message).toMatch(/past its credit/);
    await nothingLeft(s, null, before);
    await waitForNoProcess(s.id, (p) => p.args === 'cat /tmp/frame');
  });

  test('a frame half-sent, then silence: the command fails E_ENGINE (command channel) within 5 s', async ({ engine, sessionId, labels, track, session }) => {
    const s = session;
    await forged(s, FORGED.partialFrame);
    const before = sockets();
    // 5 s of silence mid-frame, then the cut: 2 s more for a loaded machine.
    const error = await bounded(7000, () => expectBerthError(s.exec(['echo', 'x']), EngineError));
    expect(error.details.operation).toBe('command channel');
    expect(error.message).toMatch(/half-sent/);
    await nothingLeft(s, '1035', before);
  });
});

engineSuite('a request over the limit', () => {
  let proxy: Awaited<ReturnType<typeof startEngineProxy>>;
  beforeAll(async () => {
    proxy = await startEngineProxy();
  });
  afterAll(async () => {
    await proxy?.close();
  });

  test('a 9 MiB argv or env: E_INVALID_ARGUMENT naming it and the limit, before any engine request; a concurrent command on the channel still succeeds', async ({
    sessionId,
    labels,
    track,
  }) => {
    // Through a proxy that counts what berth sends; the harness's run and spawn too.
    const provider = createDockerSandboxProvider({ image: TEST_IMAGE, labels, socketPath: proxy.socketPath });
    const sandbox = await provider.createSession({ sessionId });
    const s = track((sandbox as unknown as { berthSession: Session }).berthSession);
    await s.exec(['true']); // the channel is open
    const running = s.exec(['sh', '-c', 'sleep 3; echo ok']);
    const big = 'x'.repeat(9 * 1024 * 1024);
    const sent = proxy.requests.length;
    const calls: ['argv' | 'env', () => PromiseLike<unknown>][] = [
      ['argv', () => s.exec(['echo', big])],
      ['env', () => s.exec(['true'], { env: { BIG: big } })],
      ['argv', () => s.spawn(['echo', big])],
      ['env', () => s.spawn(['true'], { env: { BIG: big } })],
      ['env', () => s.execText(['true'], { env: { A: big.slice(0, 5 * 1024 * 1024), B: big.slice(0, 4 * 1024 * 1024) } })],
      ['env', () => sandbox.run({ command: 'true', env: { BIG: big } })],
      ['argv', () => sandbox.run({ command: `echo ${big}` })],
      ['env', () => sandbox.spawn({ command: 'true', env: { BIG: big } })],
      // The engine exec path (a user without a channel yet, stdin over the channel's limit) alike.
      ['argv', () => s.exec(['echo', big], { user: '4321' })],
      ['env', () => s.exec(['true'], { env: { BIG: big }, stdin: Buffer.alloc(17 * 1024 * 1024) })],
    ];
    for (const [field, call] of calls) {
      const error = await expectBerthError(Promise.resolve(call()), InvalidArgumentError);
      expect(error.details.field).toBe(field);
      expect(error.message).toMatch(new RegExp(`\\b${field} takes \\d+ bytes`));
      expect(error.message).toMatch(/over the limit of 8388608 bytes/);
    }
    // Refused before it was sent: not one engine request for any of them.
    expect(proxy.requests.slice(sent)).toEqual([]);
    const out = await running;
    expect(out).toMatchObject({ exitCode: 0 });
    expect(out.stdout.toString()).toBe('ok\n');
    expect((await s.exec(['echo', 'still'])).stdout.toString()).toBe('still\n');
  });
});
