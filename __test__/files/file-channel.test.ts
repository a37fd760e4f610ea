// The file channel: small readFile/writeFile calls travel over one long-lived exec of `sh` per
// session; whatever it cannot do (a path the user may not write, an image without sh, a
// broken channel, a large file) takes the archive path with the same results. Writes go over
// the command helper first (helper-writes.test.ts): the cases here that test the shell
// channel's writes turn the helper off (`BERTH_COMMAND_CHANNEL=0`, read by berth per call).
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, expect } from 'vitest';
import { AbortedError, createSession, InvalidArgumentError } from '../../index.mjs';
import { execIn } from '../helpers/engine-http.mjs';
import { expectBerthError } from '../helpers/expect-error.js';
import { sessionTest as test } from '../helpers/fixtures.js';
import { TEST_IMAGE } from '../helpers/test-image.mjs';
import { engineSuite } from '../helpers/suite.js';

/** How many channel processes run in container `id` (ps, through a raw exec outside berth). */
async function channels(id: string): Promise<number> {
  // The last argument of each process (`ps` cuts long command lines, and the channel's script is long).
  const out = await execIn(id, ['sh', '-c', 'for c in /proc/[0-9]*/cmdline; do tr "\\0" "\\n" < "$c" 2>/dev/null | tail -n 1; done']);
  return out.stdout.split('\n').filter((line) => line === 'berth-channel').length;
}

async function statIn(id: string, path: string): Promise<string> {
  const out = await execIn(id, ['stat', '-c', '%a %u %g', path]);
  if (out.exitCode !== 0) throw new Error(`stat ${path}: ${out.stderr}`);
  return out.stdout.trim();
}

engineSuite('file channel', () => {
  beforeAll(() => {
    process.env.BERTH_COMMAND_CHANNEL = '0';
  });
  afterAll(async () => {
    delete process.env.BERTH_COMMAND_CHANNEL;
  });

  test('many small files over one channel: bytes, modes, parents and owner as the archive path makes them', async ({ engine, sessionId, labels, track }) => {
    const session = track(await createSession({ ...engine, sessionId, image: TEST_IMAGE, labels, user: '65534:65534' }));
    const files = Array.from({ length: 12 }, (_, i) => ({ path: `/tmp/chan/d ${i % 3}/f-${i}.bin`, data: randomBytes(100 + i * 700) }));
    for (const f of files) await session.writeFile(f.path, f.data);
    for (const f of files) expect((await session.readFile(f.path))!.equals(f.data)).toBe(true);
    expect(await channels(session.id)).toBe(1);
    expect(await statIn(session.id, '/tmp/chan/d 1/f-4.bin')).toBe('644 65534 65534');
    expect(await statIn(session.id, '/tmp/chan/d 1')).toBe('755 65534 65534');
    expect(await statIn(session.id, '/tmp')).toBe('1777 0 0');
    await session.writeFile('/tmp/chan/mode', 'x', { mode: 0o600 });
    expect(await statIn(session.id, '/tmp/chan/mode')).toBe('600 65534 65534');
    // Replacing a file keeps the new content only; an empty file reads back empty.
    await session.writeFile('/tmp/chan/d 0/f-0.bin', 'short');
    expect((await session.readFile('/tmp/chan/d 0/f-0.bin'))!.toString()).toBe('short');
    await session.writeFile('/tmp/chan/empty', new Uint8Array(0));
    expect((await session.readFile('/tmp/chan/empty'))!.length).toBe(0);
    expect(await session.readFile('/tmp/chan/absent')).toBeNull();
  });

  test('a directory at the path is E_INVALID_ARGUMENT on read and write', async ({ engine, sessionId, labels, track, session }) => {
    await expectBerthError(session.readFile('/tmp'), InvalidArgumentError);
    await expectBerthError(session.writeFile('/tmp', 'x'), InvalidArgumentError);
    await expectBerthError(session.writeFile('/tmp/x', 'x', { abortSignal: AbortSignal.abort() }), AbortedError);
    // A bad path is refused before any engine call, channel or not.
    await expectBerthError(session.writeFile('relative', 'x'), InvalidArgumentError);
  });

  // File calls act as the session's user by default (E_PERMISSION_DENIED here, see
  // files-privilege.test.ts); this test opts in to the engine's privileges with `files: 'engine'`,
  // and out of no-new-privileges, which a non-root session's root rename needs on Docker.
  test("with files: 'engine', where the user may not write, the archive path writes it (owned by the user)", async ({ engine, sessionId, labels, track }) => {
    const session = track(
      await createSession({ ...engine, sessionId, image: TEST_IMAGE, labels, user: '65534:65534', files: 'engine', noNewPrivileges: false }),
    );
    expect((await execIn(session.id, ['mkdir', '-p', '/opt/root-only'], { user: '0' })).exitCode).toBe(0);
    await session.writeFile('/opt/root-only/sub/f.txt', 'through the archive');
    expect((await session.readFile('/opt/root-only/sub/f.txt'))!.toString()).toBe('through the archive');
    expect(await statIn(session.id, '/opt/root-only/sub/f.txt')).toBe('644 65534 65534');
    expect(await statIn(session.id, '/opt/root-only')).toBe('755 0 0');
    // An unreadable file is read through the archive API (as the engine reads it).
    expect((await execIn(session.id, ['sh', '-c', 'echo secret > /opt/root-only/r && chmod 600 /opt/root-only/r'], { user: '0' })).exitCode).toBe(0);
    expect((await session.readFile('/opt/root-only/r'))!.toString()).toBe('secret\n');
    // In a directory the user may not search, a file is not "absent": the archive path reads it.
    const hidden = 'mkdir -p /opt/private && echo hidden > /opt/private/f && chmod 700 /opt/private';
    expect((await execIn(session.id, ['sh', '-c', hidden], { user: '0' })).exitCode).toBe(0);
    expect((await session.readFile('/opt/private/f'))?.toString()).toBe('hidden\n');
    expect(await session.readFile('/opt/private/none')).toBeNull();
  });

  test('a killed channel is replaced; files over the channel limit take the archive path', async ({ engine, sessionId, labels, track, session }) => {
    await session.writeFile('/tmp/one', 'one');
    expect(await channels(session.id)).toBe(1);
    const kill = await execIn(
      session.id,
      ['sh', '-c', 'for c in /proc/[0-9]*/cmdline; do [ "$(tr "\\0" "\\n" < "$c" 2>/dev/null | tail -n 1)" = berth-channel ] && p=${c%/cmdline} && kill -9 ${p#/proc/}; done; exit 0'],
      { user: '0' },
    );
    expect(kill.exitCode).toBe(0);
    await session.writeFile('/tmp/two', 'two'); // the dead channel fails: archive path, channel dropped
    await session.writeFile('/tmp/three', 'three'); // a new channel
    expect((await session.readFile('/tmp/two'))!.toString()).toBe('two');
    expect((await session.readFile('/tmp/three'))!.toString()).toBe('three');
    expect(await channels(session.id)).toBe(1);
    const big = randomBytes(64 * 1024);
    await session.writeFile('/tmp/big', big);
    expect((await session.readFile('/tmp/big'))!.equals(big)).toBe(true);
  });

  test('an image that cannot run the channel (no sh): every file call takes the archive path', async ({ engine, sessionId, labels, track, session }) => {
    expect((await execIn(session.id, ['rm', '/bin/sh'], { user: '0' })).exitCode).toBe(0);
    const data = randomBytes(3000);
    await session.writeFile('/tmp/no-b64/f', data);
    expect((await session.readFile('/tmp/no-b64/f'))!.equals(data)).toBe(true);
    expect(await session.readFile('/tmp/no-b64/absent')).toBeNull();
    expect(await channels(session.id)).toBe(0);
  });
});
