// Writes to a file that is itself a mount point (a single-file bind mount: the engine's
// /etc/hosts, a user mount of one host file): a rename over it fails (EBUSY), so berth copies
// the complete temporary file over it in place, with the write's identity. Small writes (tried
// on the file channel, whose failed rename hands them on), large ones (the archive path and its
// root rename, or the as-the-user exec) and streams; the file stays a mount point, no
// temporary file is left, and a non-root user still may not write a root-owned mounted file.
import { chmodSync, chownSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect } from 'vitest';
import { createSession, PermissionDeniedError, type Session } from '../../index.mjs';
import { execIn } from '../helpers/engine-http.mjs';
import { expectBerthError } from '../helpers/expect-error.js';
import { sessionTest as test } from '../helpers/fixtures.js';
import { testLabels, testSessionId } from '../helpers/run-label.mjs';
import { TEST_IMAGE } from '../helpers/test-image.mjs';
import { engineSuite } from '../helpers/suite.js';

async function asRoot(id: string, script: string): Promise<string> {
  const out = await execIn(id, ['sh', '-c', script], { user: '0' });
  if (out.exitCode !== 0) throw new Error(`${script}: ${out.stderr}`);
  return out.stdout;
}

/** Whether `path` is a mount point in the container (its mountinfo line, field 5). */
async function isMountPoint(id: string, path: string): Promise<boolean> {
  const info = await asRoot(id, 'cat /proc/self/mountinfo');
  return info.split('\n').some((line) => line.split(' ')[4] === path);
}

/** Temporary files berth left in `dir` (polled: a removal after a failure runs in the background). */
async function tempFilesIn(id: string, dir: string): Promise<string[]> {
  let left: string[] = [];
  for (let i = 0; i < 40; i++) {
    left = (await asRoot(id, `ls -a ${dir}`)).split('\n').filter((n) => n.startsWith('.berth-tmp-'));
    if (left.length === 0) return [];
    await new Promise((r) => setTimeout(r, 100));
  }
  return left;
}

function iterable(chunks: string[]): AsyncIterable<Uint8Array> {
  return (async function* () {
    for (const c of chunks) yield new TextEncoder().encode(c);
  })();
}

// Small is tried on the file channel first; large (> 16 KiB) goes to the archive path or the exec.
const contents = (tag: string) => ({
  small: `127.0.0.1 localhost ${tag}\n`,
  large: `127.0.0.1 localhost ${tag}\n` + '# padding\n'.repeat(4000),
});

engineSuite('writes to a file that is itself a mount point', () => {
  let root: Session;
  let user: Session;
  let hostDir: string;
  let userFile: string;
  let rootFile: string;
  beforeAll(async () => {
    hostDir = mkdtempSync(join(tmpdir(), 'berth-mountfile-'));
    chmodSync(hostDir, 0o755);
    userFile = join(hostDir, 'cfg.txt');
    rootFile = join(hostDir, 'root.txt');
    writeFileSync(userFile, 'old user\n');
    chownSync(userFile, 1000, 1000);
    chmodSync(userFile, 0o640);
    writeFileSync(rootFile, 'old root\n');
    chmodSync(rootFile, 0o644);
    [root, user] = await Promise.all([
      createSession({ sessionId: testSessionId('mf-root'), image: TEST_IMAGE, labels: testLabels() }),
      createSession({
        sessionId: testSessionId('mf-user'),
        image: TEST_IMAGE,
        user: '1000:1000',
        labels: testLabels(),
        mounts: [
          { source: userFile, target: '/work/cfg.txt' },
          { source: rootFile, target: '/work/root.txt' },
        ],
        // The directory is the user's, so the rename path (not the in-place staging for a
        // directory the user may not write) is the one that meets the mount point.
        writablePaths: ['/work'],
      }),
    ]);
  });
  afterAll(async () => {
    await Promise.allSettled([root?.remove(), user?.remove()]);
    if (hostDir) rmSync(hostDir, { recursive: true, force: true });
  });

  test('a root session writes /etc/hosts: read back equal, still a mount point, no temporary file', async () => {
    expect(await isMountPoint(root.id, '/etc/hosts')).toBe(true);
    for (const [size, data] of Object.entries(contents('root'))) {
      await root.writeFile('/etc/hosts', data);
      expect(new TextDecoder().decode((await root.readFile('/etc/hosts'))!), size).toBe(data);
      expect(await asRoot(root.id, 'cat /etc/hosts'), size).toBe(data);
    }
    const streamed = ['127.0.0.1 localhost streamed\n', '# tail\n'];
    await root.writeFileStream('/etc/hosts', iterable(streamed));
    expect(await asRoot(root.id, 'cat /etc/hosts')).toBe(streamed.join(''));
    // A given mode is applied in place; the owner is kept.
    await root.writeFile('/etc/hosts', contents('mode').small, { mode: 0o600 });
    expect((await asRoot(root.id, 'stat -c "%a %u" /etc/hosts')).trim()).toBe('600 0');
    await root.writeFile('/etc/hosts', contents('back').small, { mode: 0o644 });
    expect(await isMountPoint(root.id, '/etc/hosts')).toBe(true);
    expect(await tempFilesIn(root.id, '/etc')).toEqual([]);
    // A plain file beside it still gets a new inode (the atomic rename).
    await root.writeFile('/etc/plain.txt', 'a');
    const before = await asRoot(root.id, 'stat -c %i /etc/plain.txt');
    await root.writeFile('/etc/plain.txt', 'b');
    expect(await asRoot(root.id, 'stat -c %i /etc/plain.txt')).not.toBe(before);
  });

  test('a non-root user writes a bind-mounted host file it owns: the host file changes', async () => {
    expect(await isMountPoint(user.id, '/work/cfg.txt')).toBe(true);
    const ino = statSync(userFile).ino;
    for (const [size, data] of Object.entries(contents('user'))) {
      await user.writeFile('/work/cfg.txt', data);
      expect(readFileSync(userFile, 'utf8'), size).toBe(data);
      expect(new TextDecoder().decode((await user.readFile('/work/cfg.txt'))!), size).toBe(data);
    }
    await user.writeFileStream('/work/cfg.txt', iterable(['streamed ', 'user\n']));
    expect(readFileSync(userFile, 'utf8')).toBe('streamed user\n');
    const st = statSync(userFile);
    expect([st.ino, st.uid, st.gid, st.mode & 0o777]).toEqual([ino, 1000, 1000, 0o640]);
    expect(await isMountPoint(user.id, '/work/cfg.txt')).toBe(true);
    expect(await tempFilesIn(user.id, '/work')).toEqual([]);
  });

  test('a non-root user still may not write a root-owned mounted file', async () => {
    for (const data of Object.values(contents('denied'))) {
      await expectBerthError(user.writeFile('/work/root.txt', data), PermissionDeniedError);
    }
    expect(readFileSync(rootFile, 'utf8')).toBe('old root\n');
    expect(await tempFilesIn(user.id, '/work')).toEqual([]);
  });
});
