// session.readFile / writeFile / openFile / writeFileStream on the real engine: binary round
// trips, odd paths, missing files, parents and ownership, the exec fallback on tmpfs and
// read-only roots, and a 64 MiB streamed round trip whose memory is measured in a child process.
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect } from 'vitest';
import { AbortedError, createSession, EngineError, InvalidArgumentError, SessionNotFoundError, type Session } from '../../index.mjs';
import { execIn } from '../helpers/engine-http.mjs';
import { expectBerthError } from '../helpers/expect-error.js';
import { sessionTest as test } from '../helpers/fixtures.js';
import { onPodman } from '../helpers/test-engine.mjs';
import { lastJsonLine, runNode } from '../helpers/node-process.js';
import { testLabels, testSessionId } from '../helpers/run-label.mjs';
import { TEST_IMAGE } from '../helpers/test-image.mjs';
import { engineSuite } from '../helpers/suite.js';

const MEMORY_SCRIPT = fileURLToPath(new URL('../scripts/file-memory.mjs', import.meta.url));
const MIB = 1024 * 1024;

/** `stat -c '%a %u %g'` of `path` in container `id`, through a raw exec outside berth. */
async function statIn(id: string, path: string): Promise<string> {
  const out = await execIn(id, ['stat', '-c', '%a %u %g', path]);
  if (out.exitCode !== 0) throw new Error(`stat ${path}: ${out.stderr}`);
  return out.stdout.trim();
}

async function collect(stream: ReadableStream<Uint8Array>): Promise<Buffer> {
  const chunks: Uint8Array[] = [];
  for await (const chunk of stream) chunks.push(chunk);
  return Buffer.concat(chunks);
}

engineSuite('files', () => {
  let shared: Session;
  beforeAll(async () => {
    shared = await createSession({ sessionId: testSessionId('files'), image: TEST_IMAGE, labels: testLabels() });
  });
  afterAll(async () => {
    await shared?.remove();
  });

  test.for([0, 1, MIB])('%i bytes of random data round-trip unchanged (buffered and streamed)', async (size) => {
    const bytes = randomBytes(size);
    const path = `/tmp/round-trip-${size}.bin`;
    await shared.writeFile(path, bytes);
    const back = await shared.readFile(path);
    expect(Buffer.isBuffer(back)).toBe(true);
    expect(back!.equals(bytes)).toBe(true);
    const stream = await shared.openFile(path);
    expect((await collect(stream!)).equals(bytes)).toBe(true);
    // The engine's own view agrees on the size.
    expect((await execIn(shared.id, ['wc', '-c', path])).stdout.trim()).toBe(`${size} ${path}`);
  });

  test('a procfs file (stat size 0, with data) reads to its end, not as empty', async () => {
    const expected = (await execIn(shared.id, ['cat', '/proc/self/mounts'])).stdout;
    const text = (await shared.readFile('/proc/cpuinfo'))?.toString() ?? '';
    expect(text).toMatch(/processor/);
    // Another procfs file through the streaming read: it has the same first line shape.
    const mounts = (await shared.readFile('/proc/mounts'))?.toString() ?? '';
    expect(mounts.split('\n')[0]).toBe(expected.split('\n')[0]);
  });

  test('a stream of unknown length is written and read back in order', async () => {
    const chunks = Array.from({ length: 40 }, (_, i) => randomBytes(1000 + i * 997));
    async function* source(): AsyncGenerator<Uint8Array> {
      for (const chunk of chunks) yield chunk;
    }
    await shared.writeFileStream('/tmp/streamed.bin', source());
    expect((await shared.readFile('/tmp/streamed.bin'))!.equals(Buffer.concat(chunks))).toBe(true);
    const web = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode('from a '));
        controller.enqueue(new TextEncoder().encode('web stream'));
        controller.close();
      },
    });
    await shared.writeFileStream('/tmp/web.txt', web);
    expect((await shared.readFile('/tmp/web.txt'))!.toString()).toBe('from a web stream');
  });

  test('cancel and abort: a read stream cancelled after one chunk; an aborted stream write writes nothing', async () => {
    const bytes = randomBytes(2 * MIB);
    await shared.writeFile('/tmp/cancel-me.bin', bytes);
    const stream = (await shared.openFile('/tmp/cancel-me.bin'))!;
    const reader = stream.getReader();
    const first = await reader.read();
    expect(first.done).toBe(false);
    expect(Buffer.from(first.value!).equals(bytes.subarray(0, first.value!.byteLength))).toBe(true);
    await reader.cancel();
    // The session keeps working after the dropped download.
    expect((await shared.readFile('/tmp/cancel-me.bin'))!.equals(bytes)).toBe(true);

    const controller = new AbortController();
    async function* source(): AsyncGenerator<Uint8Array> {
      yield randomBytes(1000);
      controller.abort();
      yield randomBytes(1000);
    }
    await expectBerthError(shared.writeFileStream('/tmp/aborted.bin', source(), { abortSignal: controller.signal }), AbortedError);
    expect(await shared.readFile('/tmp/aborted.bin')).toBeNull();
    const already = new AbortController();
    already.abort();
    await expectBerthError(shared.writeFile('/tmp/aborted.bin', 'x', { abortSignal: already.signal }), AbortedError);
    expect(await shared.readFile('/tmp/aborted.bin')).toBeNull();
  });

  test('a path with spaces and unicode, strings written as UTF-8', async () => {
    const path = '/tmp/a dir with spaces/ünï cødé ✓ 文件.txt';
    await shared.writeFile(path, 'héllo wörld ✓\n');
    expect((await shared.readFile(path))!.toString('utf8')).toBe('héllo wörld ✓\n');
    expect((await execIn(shared.id, ['cat', path])).stdout).toBe('héllo wörld ✓\n');
    const long = `/tmp/${'x'.repeat(150)}/${'y'.repeat(120)}.txt`;
    await shared.writeFile(long, 'long name');
    expect((await shared.readFile(long))!.toString()).toBe('long name');
  });

  test('a missing file reads as null; a missing directory too; a directory is refused', async () => {
    expect(await shared.readFile('/tmp/no-such-file')).toBeNull();
    expect(await shared.readFile('/no/such/dir/file')).toBeNull();
    expect(await shared.openFile('/tmp/no-such-file')).toBeNull();
    const error = await expectBerthError(shared.readFile('/tmp'), InvalidArgumentError);
    expect(error.details).toMatchObject({ field: 'path' });
    await expectBerthError(shared.writeFile('/tmp', 'x'), InvalidArgumentError);
    await expectBerthError(shared.readFile('relative/path'), InvalidArgumentError);
    await expectBerthError(shared.writeFile('/tmp/../etc/passwd', 'x'), InvalidArgumentError);
  });

  test('symbolic links are followed on read and written through', async () => {
    await shared.writeFile('/tmp/link-target.txt', 'target');
    expect((await execIn(shared.id, ['ln', '-sf', '/tmp/link-target.txt', '/tmp/abs-link'])).exitCode).toBe(0);
    expect((await execIn(shared.id, ['ln', '-sf', 'link-target.txt', '/tmp/rel-link'])).exitCode).toBe(0);
    expect((await shared.readFile('/tmp/abs-link'))!.toString()).toBe('target');
    expect((await shared.readFile('/tmp/rel-link'))!.toString()).toBe('target');
    await shared.writeFile('/tmp/abs-link', 'through the link');
    expect((await execIn(shared.id, ['cat', '/tmp/link-target.txt'])).stdout).toBe('through the link');
    expect((await execIn(shared.id, ['sh', '-c', 'test -L /tmp/abs-link && echo still-a-link'])).stdout).toBe('still-a-link\n');
  });

  test('missing parents are created for the session user; /tmp keeps mode 1777 and root ownership', async ({
    sessionId,
    labels,
    track,
  }) => {
    const session = track(await createSession({ sessionId, image: TEST_IMAGE, labels, user: '65534:65534' }));
    const before = await statIn(session.id, '/tmp');
    expect(before).toBe('1777 0 0');
    await session.writeFile('/tmp/new/deeper/file.txt', 'owned');
    expect(await statIn(session.id, '/tmp')).toBe(before);
    expect(await statIn(session.id, '/tmp/new')).toBe('755 65534 65534');
    expect(await statIn(session.id, '/tmp/new/deeper')).toBe('755 65534 65534');
    expect(await statIn(session.id, '/tmp/new/deeper/file.txt')).toBe('644 65534 65534');
    // The user can change what it owns, as a file it created itself.
    expect((await session.exec(['sh', '-c', 'echo more >> /tmp/new/deeper/file.txt && touch /tmp/new/mine'])).exitCode).toBe(0);
    await session.writeFile('/tmp/new/script.sh', '#!/bin/sh\necho ran\n', { mode: 0o750 });
    expect(await statIn(session.id, '/tmp/new/script.sh')).toBe('750 65534 65534');
    expect((await session.exec(['/tmp/new/script.sh'])).stdout.toString()).toBe('ran\n');
  });

  test('tmpfs mounts go through the exec fallback (the archive API would lose the file)', async () => {
    // /dev/shm is a tmpfs in every Docker container.
    await shared.writeFile('/dev/shm/fallback/nested/f.bin', Buffer.from([0, 1, 2, 255]));
    const seen = await execIn(shared.id, ['sh', '-c', 'od -An -tx1 /dev/shm/fallback/nested/f.bin']);
    expect(seen.stdout.trim().split(/\s+/)).toEqual(['00', '01', '02', 'ff']);
    expect((await shared.readFile('/dev/shm/fallback/nested/f.bin'))!).toEqual(Buffer.from([0, 1, 2, 255]));
    expect(await shared.readFile('/dev/shm/none')).toBeNull();
    const big = randomBytes(3 * MIB + 17);
    await shared.writeFileStream('/dev/shm/big.bin', [big.subarray(0, MIB), big.subarray(MIB)]);
    expect((await collect((await shared.openFile('/dev/shm/big.bin'))!)).equals(big)).toBe(true);
  });

  test('devices and FIFOs on a tmpfs are refused, never read (they may never end)', async () => {
    await execIn(shared.id, ['mkfifo', '/dev/shm/fifo']);
    for (const path of ['/dev/zero', '/dev/shm/fifo']) {
      await expect(shared.readFile(path)).rejects.toMatchObject({ code: 'E_INVALID_ARGUMENT', details: { field: 'path' } });
      await expect(shared.openFile(path)).rejects.toMatchObject({ code: 'E_INVALID_ARGUMENT' });
    }
    const left = await execIn(shared.id, ['sh', '-c', 'ps -o args | grep -c "^cat" || true']);
    expect(left.stdout.trim()).toBe('0');
  });

  test('a write never replaces a device, a FIFO, or a directory behind a link (archive and exec paths, as the user\'s path refuses them)', async () => {
    const made = await execIn(shared.id, [
      'sh',
      '-c',
      'mkfifo /tmp/wfifo /dev/shm/wfifo && ln -sf /tmp/wfifo /tmp/to-fifo && mkdir -p /tmp/a-dir && ln -sfn /tmp/a-dir /tmp/to-dir',
    ]);
    expect(made.exitCode).toBe(0);
    for (const path of ['/dev/null', '/tmp/wfifo', '/dev/shm/wfifo', '/tmp/to-fifo', '/tmp/to-dir']) {
      const error = await expectBerthError(shared.writeFile(path, 'x'), InvalidArgumentError);
      expect(error.details).toMatchObject({ field: 'path' });
    }
    const kinds = await execIn(shared.id, ['sh', '-c', 'stat -c %F /dev/null /tmp/wfifo /dev/shm/wfifo /tmp/a-dir; ls -A /tmp/a-dir | wc -l']);
    expect(kinds.stdout.trim().split('\n').map((l) => l.trim())).toEqual(['character special file', 'fifo', 'fifo', 'directory', '0']);
  });

  test('read-only root filesystem: tmpfs paths are written through exec; the root as the engine decides', async ({
    sessionId,
    labels,
    track,
  }) => {
    const session = track(
      await createSession({ sessionId, image: TEST_IMAGE, labels, user: '65534:65534', readOnlyRootFilesystem: true }),
    );
    await session.writeFile('/dev/shm/made/on-ro.txt', 'ro root, tmpfs ok');
    expect((await session.readFile('/dev/shm/made/on-ro.txt'))!.toString()).toBe('ro root, tmpfs ok');
    expect(await statIn(session.id, '/dev/shm/made/on-ro.txt')).toBe('644 65534 65534');
    expect(await statIn(session.id, '/dev/shm/made')).toBe('755 65534 65534');
    if (onPodman()) {
      // Podman's archive API writes through to the container's storage even when its root is
      // mounted read-only; berth passes that on (README, Podman).
      await session.writeFile('/tmp/on-root.txt', 'x');
      expect((await session.readFile('/tmp/on-root.txt'))!.toString()).toBe('x');
    } else {
      const error = await expectBerthError(session.writeFile('/tmp/on-root.txt', 'x'), EngineError);
      expect(error.message).toMatch(/write file/);
    }
    expect((await session.readFile('/etc/passwd'))!.toString()).toMatch(/^root:/);
  });

  test('a stopped container: files are still read and written (the archive API needs no process)', async ({
    sessionId,
    labels,
    track,
  }) => {
    const session = track(await createSession({ sessionId, image: TEST_IMAGE, labels }));
    await session.stop({ timeoutMs: 0 });
    await session.writeFile('/tmp/while-stopped/f.txt', 'written while stopped');
    expect((await session.readFile('/tmp/while-stopped/f.txt'))!.toString()).toBe('written while stopped');
    expect(await session.readFile('/tmp/none')).toBeNull();
  });

  test('a removed container: E_SESSION_NOT_FOUND, not null', async ({ sessionId, labels }) => {
    const session = await createSession({ sessionId, image: TEST_IMAGE, labels });
    await session.writeFile('/tmp/x', 'x');
    await session.remove();
    await expectBerthError(session.readFile('/tmp/x'), SessionNotFoundError);
  });

  test('64 MiB streamed both ways: RSS and arrayBuffers of the process do not grow by the file size', async ({
    sessionId,
    labels,
  }) => {
    const run = await runNode(
      ['--expose-gc', MEMORY_SCRIPT],
      { BERTH_MEMORY_SESSION: sessionId, BERTH_MEMORY_LABELS: JSON.stringify(labels), BERTH_MEMORY_MIB: '64' },
      240_000,
    );
    expect(run, run.stderr).toMatchObject({ code: 0, killed: false });
    const report = lastJsonLine(run);
    expect(report.readSize).toBe(64 * MIB);
    expect(report.readSha).toBe(report.writtenSha);
    expect(report.containerSize).toBe(64 * MIB);
    // Growth over the baseline at the peak, sampled on every chunk: a fraction of the file size.
    expect(report.peakRssGrowth).toBeLessThan(24 * MIB);
    expect(report.peakArrayBuffersGrowth).toBeLessThan(8 * MIB);
  });
});
