// session.exec on the real engine: bytes in and out, stdin (case 5), exit codes, timeouts that
// kill the whole tree (case 8), zombies reaped by the init (case 9), and output caps.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, expect } from 'vitest';
import { createSession, EngineError, ExecTimeoutError, InvalidArgumentError, SessionDeadError, type Session } from '../../index.mjs';
import { execIn, removeContainer } from '../helpers/engine-http.mjs';
import { processesIn, waitForNoProcess, waitForProcess, waitForTreeKill } from '../helpers/engine-wait.js';
import { expectBerthError } from '../helpers/expect-error.js';
import { sessionTest as test } from '../helpers/fixtures.js';
import { testLabels, testSessionId } from '../helpers/run-label.mjs';
import { onPodman } from '../helpers/test-engine.mjs';
import { TEST_IMAGE } from '../helpers/test-image.mjs';
import { engineSuite } from '../helpers/suite.js';

/** Whether commands go over the command channel (off with BERTH_COMMAND_CHANNEL=0: the engine exec path). */
const commandChannel = process.env.BERTH_COMMAND_CHANNEL !== '0';
/** Forks a child that waits for /tmp/orphan-go, and exits without waiting for it. */
const START_ORPHAN = 'sh -c "while [ ! -e /tmp/orphan-go ]; do sleep 0.05; done" </dev/null >/dev/null 2>&1 & exit 0';

engineSuite('exec', () => {
  // One session for the read-only tests; tests that leave state behind make their own.
  let shared: Session;
  beforeAll(async () => {
    shared = await createSession({ sessionId: testSessionId('exec'), image: TEST_IMAGE, labels: testLabels() });
  });
  afterAll(async () => {
    await shared?.remove();
  });

  test('keeps stdout and stderr apart, as bytes, with the exit code', async () => {
    const out = await shared.exec(['sh', '-c', 'printf "to out"; printf "to err" >&2; exit 7']);
    expect(out).toMatchObject({ exitCode: 7, truncated: false });
    expect(Buffer.isBuffer(out.stdout) && Buffer.isBuffer(out.stderr)).toBe(true);
    expect(out.stdout.toString()).toBe('to out');
    expect(out.stderr.toString()).toBe('to err');
  });

  test('binary stdout keeps leading 0x00-0x02 bytes (no TTY framing confusion)', async () => {
    const out = await shared.exec(['printf', '\\000\\001\\002\\377\\012abc']);
    expect(out.stdout).toEqual(Buffer.from([0x00, 0x01, 0x02, 0xff, 0x0a, 0x61, 0x62, 0x63]));
    const err = await shared.exec(['sh', '-c', 'printf "\\002\\001\\000" >&2']);
    expect(err.stderr).toEqual(Buffer.from([0x02, 0x01, 0x00]));
    expect(err.stdout).toEqual(Buffer.alloc(0));
  });

  test('passes argv without a shell', async () => {
    const out = await shared.exec(['echo', '$HOME', '; true', '`id`', "'quoted'"]);
    expect(out.stdout.toString()).toBe("$HOME ; true `id` 'quoted'\n");
  });

  test.for([
    [['true'], 0],
    [['false'], 1],
    [['sh', '-c', 'exit 255'], 255],
    [['sh', '-c', 'kill -9 $$'], 137],
    [['sh', '-c', 'kill -15 $$'], 143],
    // A missing program: Docker's runtime answers 126, Podman's 127 (the engine's code, never made up).
    [['/no/such/program'], onPodman() ? 127 : 126],
  ] as const)('%j exits %i', async ([argv, code]) => {
    expect((await shared.exec([...argv])).exitCode).toBe(code);
  });

  test('stdin reaches `cat` and is closed after it, so cat ends (case 5)', async () => {
    const out = await shared.exec(['cat'], { stdin: 'hello\nworld' });
    expect(out).toMatchObject({ exitCode: 0 });
    expect(out.stdout.toString()).toBe('hello\nworld');
  });

  test('4 MiB of random bytes round-trip through stdin and stdout unchanged', async () => {
    const bytes = randomBytes(4 * 1024 * 1024);
    const out = await shared.exec(['cat'], { stdin: bytes });
    expect(out.exitCode).toBe(0);
    expect(out.stdout.equals(bytes)).toBe(true);
  });

  test('a command that never reads its stdin still returns (case 5)', async () => {
    for (const stdin of ['unread', randomBytes(4 * 1024 * 1024)]) {
      const out = await shared.exec(['sh', '-c', 'echo ignored the input; exit 4'], { stdin });
      expect(out.exitCode).toBe(4);
      // On the engine exec path Podman resets the connection when the process exits with its
      // stdin unread and sometimes drops the output it had not sent yet (podman #7360; README,
      // Podman). Over the command channel (the default) stdin is a file: the output is kept.
      if (onPodman() && !commandChannel) expect(['ignored the input\n', '']).toContain(out.stdout.toString());
      else expect(out.stdout.toString()).toBe('ignored the input\n');
    }
    expect((await shared.exec(['true'], { stdin: 'unread' })).exitCode).toBe(0);
  });

  test('an empty stdin gives EOF at once', async () => {
    const out = await shared.exec(['wc', '-c'], { stdin: new Uint8Array(0) });
    expect(out.stdout.toString().trim()).toBe('0');
  });

  test('cwd, env and user apply to one exec only', async () => {
    const out = await shared.exec(['sh', '-c', 'pwd; echo "$ONLY_HERE"; id -u'], { cwd: '/tmp', env: { ONLY_HERE: 'x y' }, user: '65534' });
    expect(out.stdout.toString()).toBe('/tmp\nx y\n65534\n');
    const plain = await shared.exec(['sh', '-c', 'pwd; echo "${ONLY_HERE-unset}"; id -u']);
    expect(plain.stdout.toString()).toBe('/\nunset\n0\n');
  });

  test('maxBufferBytes caps both streams together and sets truncated', async () => {
    // The pause orders the two pipes' arrival (the helper reads whichever is ready first).
    const out = await shared.exec(['sh', '-c', 'head -c 600 /dev/zero >&2; sleep 0.3; head -c 100000 /dev/zero; head -c 50 /dev/zero >&2'], {
      maxBufferBytes: 1000,
    });
    expect(out).toMatchObject({ exitCode: 0, truncated: true });
    // The head in arrival order: 600 bytes of stderr, then 400 of stdout; nothing after.
    expect(out.stderr).toEqual(Buffer.alloc(600));
    expect(out.stdout).toEqual(Buffer.alloc(400));
    const exact = await shared.exec(['head', '-c', '1000', '/dev/zero'], { maxBufferBytes: 1000 });
    expect(exact).toMatchObject({ truncated: false });
    expect(exact.stdout.length).toBe(1000);
  });

  test('execText answers UTF-8 text: malformed bytes as U+FFFD, a BOM kept', async () => {
    const out = await shared.execText(['sh', '-c', "printf '\\357\\273\\277h\\303\\251\\377'; printf 'e' >&2"]);
    expect(out).toEqual({ exitCode: 0, stdout: '\ufeffh\u00e9\ufffd', stderr: 'e', truncated: false, oomKilled: false });
  });

  test('timeoutMs: E_EXEC_TIMEOUT, and a moment later no `sleep` of it is left (case 8)', async () => {
    const error = await expectBerthError(shared.exec(['sh', '-c', 'sleep 1000 & sleep 1000'], { timeoutMs: 500 }), ExecTimeoutError);
    expect(error.details).toMatchObject({ timeoutMs: 500, container: shared.name });
    expect(Buffer.isBuffer(error.details.stdout) && Buffer.isBuffer(error.details.stderr)).toBe(true);
    // Only the keep-alive `sleep 2147483647` may remain once the tree kill, which runs after the
    // call settled, has finished.
    await waitForNoProcess(shared.id, (p) => p.args.startsWith('sleep 1000') || p.args.includes('sleep 1000 &'));
    await waitForTreeKill(shared.id);
    expect((await processesIn(shared.id)).filter((p) => p.args.startsWith('sleep'))).toEqual([
      expect.objectContaining({ args: 'sleep 2147483647' }),
    ]);
  });

  test('a timed-out exec carries its output so far as Buffers; children in a new session or with a cleared env die too', async () => {
    const error = await expectBerthError(
      shared.exec(['sh', '-c', 'printf "\\000partial"; printf oops >&2; setsid sleep 1001 & env -i sleep 1009 & sleep 1002'], {
        timeoutMs: 3000,
      }),
      ExecTimeoutError,
    );
    expect(error.details.stdout).toEqual(Buffer.from('\0partial'));
    expect(error.details.stderr).toEqual(Buffer.from('oops'));
    await waitForNoProcess(shared.id, (p) => ['sleep 1001', 'sleep 1002', 'sleep 1009'].includes(p.args));
  });

  test('zombies: an orphan is reparented to the init, and reaped once it exits (case 9)', async ({ sessionId, labels, track, session }) => {
    // The exec's shell forks a child and exits without waiting for it.
    const out = await session.exec(['sh', '-c', START_ORPHAN]);
    expect(out.exitCode).toBe(0);
    const orphan = await waitForProcess(session.id, (p) => p.args.includes('/tmp/orphan-go'));
    const ppid = (await execIn(session.id, ['sh', '-c', `cut -d' ' -f4 /proc/${orphan.pid}/stat`])).stdout.trim();
    expect(ppid).toBe('1');

    // Let it exit, then it must disappear entirely: a zombie would keep its /proc entry.
    await execIn(session.id, ['touch', '/tmp/orphan-go']);
    await waitForNoProcess(session.id, (p) => p.pid === orphan.pid);
    const stats = await execIn(session.id, ['sh', '-c', 'cat /proc/[0-9]*/stat 2>/dev/null']);
    const states = stats.stdout
      .trim()
      .split('\n')
      .map((line) => line.slice(line.lastIndexOf(')') + 2).split(' ')[0]);
    expect(states.length).toBeGreaterThan(1);
    expect(states).not.toContain('Z');
    expect((await processesIn(session.id)).filter((p) => p.stat.startsWith('Z'))).toEqual([]);
  });

  test('control: in a container without an init, the same orphan stays a zombie (the check above can fail)', async ({
    sessionId,
    handMade,
  }) => {
    const id = await handMade(`${sessionId}-no-init`);
    await execIn(id, ['sh', '-c', START_ORPHAN]);
    const orphan = await waitForProcess(id, (p) => p.args.includes('/tmp/orphan-go'));
    await execIn(id, ['touch', '/tmp/orphan-go']);
    const zombie = await waitForProcess(id, (p) => p.pid === orphan.pid && p.stat.startsWith('Z'));
    expect(zombie.stat).toMatch(/^Z/);
  });

  test('exec and hostAddress on a container removed behind the handle: E_SESSION_DEAD, removed-outside', async ({ sessionId, labels }) => {
    const session = await createSession({ sessionId, image: TEST_IMAGE, labels, ports: [8080] });
    await removeContainer(session.id);
    const e = await expectBerthError(session.exec(['true']), SessionDeadError);
    expect(e.details.cause).toBe('removed-outside');
    await expectBerthError(session.hostAddress(8080), SessionDeadError);
    await expect(session.remove()).resolves.toEqual({ removed: false, reason: 'absent' });
  });

  test('an argv with a lone surrogate is refused, not mangled', async ({ sessionId, labels, track, session }) => {
    const error = await expectBerthError(session.exec(['echo', 'a\ud800b']), InvalidArgumentError);
    expect(error.details).toMatchObject({ field: 'argv[1]' });
  });

  test('hostAddress of a stopped session: E_ENGINE 409 at once', async ({ sessionId, labels, track }) => {
    const session = track(await createSession({ sessionId, image: TEST_IMAGE, labels, ports: [8080] }));
    await session.stop({ timeoutMs: 0 });
    const error = await expectBerthError(session.hostAddress(8080), EngineError);
    expect(error.details).toMatchObject({ status: 409 });
  });

  test('exec in a stopped session: E_ENGINE with the HTTP status', async ({ sessionId, labels, track, session }) => {
    await session.stop({ timeoutMs: 0 });
    const error = await expectBerthError(session.exec(['true']), EngineError);
    expect(error.details).toMatchObject({ status: 409, operation: 'create exec' });
  });
});
