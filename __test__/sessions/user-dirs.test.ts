// A non-root session's own directories (docs/design.md#user-directories): a `workDir` the
// image lacks is the session user's right after create and recreate (Docker makes it
// `root:root 0755`, Podman the user's), as is every `writablePaths` entry the image lacks; a
// directory the image ships and a bind mount's host directory keep their owner. Also through
// the harness provider with `user` + `workDir` (relative file paths resolve against it).
import { mkdtempSync, realpathSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect } from 'vitest';
import { createDockerSandboxProvider } from '../../harness.mjs';
import { createSession, recreateSession, verifySession, type Session } from '../../index.mjs';
import { execIn } from '../helpers/engine-http.mjs';
import { sessionTest as test } from '../helpers/fixtures.js';
import { testLabels } from '../helpers/run-label.mjs';
import { TEST_IMAGE } from '../helpers/test-image.mjs';
import { engineSuite } from '../helpers/suite.js';

const hostDirs: string[] = [];
function hostDir(): string {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'berth-user-dirs-')));
  hostDirs.push(dir);
  return dir;
}

/** `stat -c '%u %g %a'` of each path, as root through the raw Engine API. */
async function owners(s: Session, ...paths: string[]): Promise<string[]> {
  const out = await execIn(s.id, ['stat', '-c', '%u %g %a', ...paths], { user: '0' });
  expect(out).toMatchObject({ exitCode: 0 });
  return out.stdout.toString().trim().split('\n');
}

async function writesIn(s: Session, dir: string): Promise<void> {
  expect(await s.exec(['touch', 'f'])).toMatchObject({ exitCode: 0 });
  expect(await s.exec(['test', '-f', `${dir}/f`])).toMatchObject({ exitCode: 0 });
  await s.writeFile(`${dir}/x`, 'written');
  expect((await s.readFile(`${dir}/x`))?.toString()).toBe('written');
}

engineSuite('user directories at create', () => {
  afterAll(async () => {
    for (const dir of hostDirs) rmSync(dir, { recursive: true, force: true });
  });

  test('a workDir the image lacks is the non-root user\'s after create and after recreate', async ({ engine, sessionId, labels, track }) => {
    const spec = { ...engine, sessionId, image: TEST_IMAGE, labels, user: '1000:1000', workDir: '/workspace' };
    const s = track(await createSession(spec));
    await writesIn(s, '/workspace');
    expect(await owners(s, '/workspace')).toEqual(['1000 1000 755']);

    // Recreate shares the create's steps: the new container's workDir is the user's again.
    const fresh = track(await recreateSession(spec));
    expect(await owners(fresh, '/workspace')).toEqual(['1000 1000 755']);
    await writesIn(fresh, '/workspace');
  });

  test('a nested workDir and a user given by name: the directory itself is the user\'s, its parents stay root\'s', async ({ engine, sessionId, labels, track }) => {
    const s = track(await createSession({ ...engine, sessionId, image: TEST_IMAGE, labels, user: 'nobody', workDir: '/srv/app/src' }));
    await writesIn(s, '/srv/app/src');
    expect(await owners(s, '/srv/app/src', '/srv/app')).toEqual(['65534 65534 755', '0 0 755']);
  });

  test('writablePaths the image lacks are writable right after create; verify finds nothing to repair', async ({ engine, sessionId, labels, track }) => {
    const writablePaths = ['/data', '/workspace/cache', '/var/cache/app'];
    const spec = { ...engine, sessionId, image: TEST_IMAGE, labels, user: '1000:1000', workDir: '/workspace', writablePaths };
    const s = track(await createSession(spec));
    const write = await s.exec(['sh', '-c', 'echo a > /data/a && echo b > /workspace/cache/b && echo c > /var/cache/app/c && echo d > d']);
    expect(write).toMatchObject({ exitCode: 0 });
    expect(await owners(s, '/data', '/workspace/cache', '/var/cache/app', '/var/cache')).toEqual([
      '1000 1000 755',
      '1000 1000 755',
      '1000 1000 755',
      '0 0 755',
    ]);
    expect(await verifySession(sessionId, { ...engine, spec: { writablePaths, user: '1000:1000' }, repair: false })).toEqual({
      id: s.id,
      ok: true,
      findings: [],
    });
  });

  test('a directory the image ships keeps its owner, as a workDir and as a writable path', async ({ engine, sessionId, labels, track }) => {
    const s = track(
      await createSession({ ...engine, sessionId, image: TEST_IMAGE, labels, user: '1000:1000', workDir: '/etc', writablePaths: ['/root'] }),
    );
    expect(await owners(s, '/etc', '/root')).toEqual(['0 0 755', '0 0 700']);
    expect(await s.exec(['touch', 'f'])).toMatchObject({ exitCode: 1 });
    // Left to verify, which reports it (and would give it to the user on repair).
    const report = await verifySession(sessionId, { ...engine, spec: { writablePaths: ['/root'], user: '1000:1000' }, repair: false });
    expect(report.findings.map((f) => f.code)).toEqual(['writable-denied']);
  });

  test('a bind mount target as workDir or writable path keeps the host directory\'s owner', async ({ engine, sessionId, labels, track }) => {
    const dir = hostDir();
    const before = statSync(dir);
    const s = track(
      await createSession({
        ...engine,
        sessionId,
        image: TEST_IMAGE,
        labels,
        user: '1000:1000',
        workDir: '/host',
        writablePaths: ['/host/sub'],
        mounts: [{ source: dir, target: '/host' }],
      }),
    );
    const after = statSync(dir);
    expect([after.uid, after.gid, after.mode]).toEqual([before.uid, before.gid, before.mode]);
    expect(await s.exec(['test', '-e', '/host/sub'])).toMatchObject({ exitCode: 1 });
  });

  test('a root session\'s workDir is left as the engine made it', async ({ engine, sessionId, labels, track }) => {
    const s = track(await createSession({ ...engine, sessionId, image: TEST_IMAGE, labels, workDir: '/workspace' }));
    expect(await owners(s, '/workspace')).toEqual(['0 0 755']);
  });

  test('the harness provider with user and workDir writes relative paths in its working directory', async ({ sessionId }) => {
    const provider = createDockerSandboxProvider({ image: TEST_IMAGE, labels: testLabels(), user: '1000:1000', workDir: '/workspace' });
    const sandbox = await provider.createSession({ sessionId });
    try {
      await sandbox.writeTextFile({ path: 'rel.txt', content: 'relative\n' });
      expect(await sandbox.readTextFile({ path: '/workspace/rel.txt' })).toBe('relative\n');
      expect(await sandbox.run({ command: 'touch a && id -u && ls' })).toEqual({ exitCode: 0, stdout: '1000\na\nrel.txt\n', stderr: '', truncated: false, oomKilled: false });
    } finally {
      await sandbox.destroy();
    }
  });
});
