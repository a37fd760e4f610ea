// Writes on a full filesystem (issue 21, part 2): a 256 KiB tmpfs mounted on the host and
// bind-mounted into the sessions at /data is filled, then every write path is tried with every
// size class: tiny and one that fits partly (written by the command helper, or by the shell
// file channel where no helper runs: the read-only root filesystem), one larger than the disk
// and past the helper's 1 MiB (the archive path for root and `files: 'engine'`, the as-the-user
// exec for uid 1000, the root exec fallback for a read-only root filesystem), and a stream
// (spooled on the host first), plus the harness provider's
// writeTextFile / writeFile. Each rejects with E_NO_SPACE (`details.errno: 'ENOSPC'`), the old
// content is intact and no temporary file is left. Needs root on the host (mount).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { HarnessV1NetworkSandboxSession } from '@ai-sdk/harness';
import { afterAll, beforeAll, describe, expect, it as test } from 'vitest';
import { createDockerSandboxProvider } from '../../harness.mjs';
import { createSession, NoSpaceError, type Session } from '../../index.mjs';
import { engineAvailable } from '../helpers/engine-available.js';
import { expectBerthError } from '../helpers/expect-error.js';
import { expectNoLeaks } from '../helpers/leak-check.mjs';
import { testLabels, testSessionId } from '../helpers/run-label.mjs';
import { TEST_IMAGE } from '../helpers/test-image.mjs';

const isRoot = process.getuid?.() === 0;
const DISK = 256 * 1024;
/** Left free for the "fits partly" cases: two tmpfs pages. */
const GAP = 8 * 1024;

const sizes = {
  tiny: 'new content\n',
  // On the file channel (up to 16 KiB), larger than the gap.
  partOnChannel: 'c'.repeat(12 * 1024),
  // Past the channel (archive path / as-the-user exec), larger than the gap.
  partOffChannel: 'o'.repeat(40 * 1024),
  // Past the command helper's 1 MiB too: the engine's paths.
  largerThanDisk: 'L'.repeat(1024 * 1024 + 64 * 1024),
};

function iterable(data: string): AsyncIterable<Uint8Array> {
  return (async function* () {
    const bytes = new TextEncoder().encode(data);
    for (let i = 0; i < bytes.length; i += 4096) yield bytes.subarray(i, i + 4096);
  })();
}

describe.skipIf(!engineAvailable() || !isRoot)('writes on a full filesystem', () => {
  let dir: string;
  let mounted = false;
  const sessions: Session[] = [];
  let harness: HarnessV1NetworkSandboxSession | undefined;

  /** Temporary files berth left on the disk (polled: a removal after a failure may run in the background). */
  async function tempFiles(): Promise<string[]> {
    let left: string[] = [];
    for (let i = 0; i < 50; i++) {
      left = readdirSync(dir).filter((n) => n.startsWith('.berth-tmp-'));
      if (left.length === 0) return [];
      await new Promise((r) => setTimeout(r, 100));
    }
    return left;
  }

  /** Removes the filling: the disk has room again. */
  function empty(): void {
    rmSync(join(dir, 'fill'), { force: true });
    rmSync(join(dir, 'gap'), { force: true });
  }

  /** Fills the disk, leaving `free` bytes (tmpfs counts whole pages). */
  function fill(free: number): void {
    rmSync(join(dir, 'fill'), { force: true });
    rmSync(join(dir, 'gap'), { force: true });
    if (free > 0) writeFileSync(join(dir, 'gap'), Buffer.alloc(free));
    try {
      execFileSync('sh', ['-c', `cat /dev/zero > ${join(dir, 'fill')}`], { stdio: 'ignore' });
    } catch {
      // cat ends with ENOSPC: the disk is full.
    }
    if (free > 0) unlinkSync(join(dir, 'gap'));
  }

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'berth-fulldisk-'));
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${DISK},mode=0777`, 'tmpfs', dir]);
    mounted = true;
    const mounts = [{ source: dir, target: '/data' }];
    const labels = testLabels();
    sessions.push(
      await createSession({ sessionId: testSessionId('fd-root'), image: TEST_IMAGE, labels, mounts }),
      await createSession({ sessionId: testSessionId('fd-user'), image: TEST_IMAGE, labels, mounts, user: '1000:1000' }),
      await createSession({
        sessionId: testSessionId('fd-engine'),
        image: TEST_IMAGE,
        labels,
        mounts,
        user: '1000:1000',
        files: 'engine',
      }),
      // A read-only root filesystem: Docker refuses the archive write, the exec fallback (as
      // root, data on stdin) writes instead.
      await createSession({
        sessionId: testSessionId('fd-ro'),
        image: TEST_IMAGE,
        labels,
        mounts,
        readOnlyRootFilesystem: true,
      }),
    );
    harness = await createDockerSandboxProvider({ image: TEST_IMAGE, labels, mounts }).createSession({
      sessionId: testSessionId('fd-harness'),
    });
  }, 120_000);

  afterAll(async () => {
    await Promise.allSettled([...sessions.map((s) => s.remove()), harness?.destroy()]);
    if (mounted) execFileSync('umount', [dir]);
    if (dir) rmSync(dir, { recursive: true, force: true });
    await expectNoLeaks();
  }, 120_000);

  const paths = ['root', 'user', 'engine', 'readonly'] as const;

  test.each(paths.map((p, i) => [p, i] as const))(
    'every size class on the %s path rejects with E_NO_SPACE, the old file intact',
    async (name, i) => {
      const session = sessions[i]!;
      const file = `/data/${name}.txt`;
      const host = join(dir, `${name}.txt`);
      empty();
      await session.writeFile(file, 'old content\n');
      const owner = statSync(host).uid;
      const cases: [string, string, number][] = [
        ['tiny', sizes.tiny, 0],
        ['part on the channel', sizes.partOnChannel, GAP],
        ['part past the channel', sizes.partOffChannel, GAP],
        ['larger than the disk', sizes.largerThanDisk, GAP],
      ];
      for (const [what, data, free] of cases) {
        fill(free);
        const e = await expectBerthError(session.writeFile(file, data), NoSpaceError);
        expect(e.code, what).toBe('E_NO_SPACE');
        expect(e.details, what).toMatchObject({ path: file, bytes: data.length, errno: 'ENOSPC' });
        expect(readFileSync(host, 'utf8'), what).toBe('old content\n');
        expect(await tempFiles(), what).toEqual([]);
      }
      // A stream of one that fits partly (spooled on the host, then written like a buffered write).
      fill(GAP);
      await expectBerthError(session.writeFileStream(file, iterable(sizes.partOffChannel)), NoSpaceError);
      expect(readFileSync(host, 'utf8')).toBe('old content\n');
      expect(await tempFiles()).toEqual([]);
      // With room again, the write goes through and the owner is kept.
      empty();
      await session.writeFile(file, sizes.tiny);
      expect(readFileSync(host, 'utf8')).toBe(sizes.tiny);
      expect(statSync(host).uid).toBe(owner);
    },
    60_000,
  );

  test("the harness provider's writeTextFile and writeFile reject with E_NO_SPACE", async () => {
    const sandbox = harness!;
    const host = join(dir, 'harness.txt');
    empty();
    await sandbox.writeTextFile({ path: '/data/harness.txt', content: 'old content\n' });
    fill(0);
    await expectBerthError(Promise.resolve(sandbox.writeTextFile({ path: '/data/harness.txt', content: sizes.tiny })), NoSpaceError);
    fill(GAP);
    const stream = new Blob([sizes.partOffChannel]).stream();
    await expectBerthError(Promise.resolve(sandbox.writeFile({ path: '/data/harness.txt', content: stream })), NoSpaceError);
    expect(readFileSync(host, 'utf8')).toBe('old content\n');
    expect(await tempFiles()).toEqual([]);
  }, 60_000);
});
