// Files as the session's user (issue 13): a uid-1000 session reads and writes exactly what
// uid 1000 may (E_PERMISSION_DENIED otherwise) through readFile / writeFile / openFile /
// writeFileStream and the harness provider's file methods; owners and modes of existing files
// are kept; setuid modes are refused for non-root; `files: 'engine'` keeps the engine's
// privileges; writes are atomic (an aborted 50 MB write over an existing file leaves it
// entirely old or entirely new, and no temporary file); host-escaping mounts (the host's root,
// kernel trees, any unix socket and a directory holding one, engine state dirs, a writable
// /etc or /boot) create nothing, on Docker and Podman alike;
// the small input rules.
import { createHash, randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, rm, symlink } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect } from 'vitest';
import {
  AbortedError,
  createSession,
  InvalidArgumentError,
  PermissionDeniedError,
  type Session,
} from '../../index.mjs';
import { createDockerSandboxProvider } from '../../harness.mjs';
import { execIn } from '../helpers/engine-http.mjs';
import { request, startEngineProxy } from '../helpers/engine-proxy.mjs';
import { expectBerthError } from '../helpers/expect-error.js';
import { sessionTest as test } from '../helpers/fixtures.js';
import { listRunContainers } from '../helpers/leak-check.mjs';
import { testLabels, testSessionId } from '../helpers/run-label.mjs';
import { testSocketPath } from '../helpers/test-engine.mjs';
import { TEST_IMAGE } from '../helpers/test-image.mjs';
import { engineSuite } from '../helpers/suite.js';

const MIB = 1024 * 1024;
const sha = (b: Uint8Array): string => createHash('sha256').update(b).digest('hex');

async function statIn(id: string, path: string): Promise<string> {
  const out = await execIn(id, ['stat', '-c', '%a %u %g', path], { user: '0' });
  if (out.exitCode !== 0) throw new Error(`stat ${path}: ${out.stderr}`);
  return out.stdout.trim();
}

async function asRoot(id: string, script: string): Promise<string> {
  const out = await execIn(id, ['sh', '-c', script], { user: '0' });
  if (out.exitCode !== 0) throw new Error(`${script}: ${out.stderr}`);
  return out.stdout;
}

async function fromStream(chunks: Uint8Array[]): Promise<ReadableStream<Uint8Array>> {
  return new ReadableStream({
    pull(controller) {
      const next = chunks.shift();
      if (next) controller.enqueue(next);
      else controller.close();
    },
  });
}

/**
 * Temporary files berth left in `dir`, polled for up to 20 s: after an abort the removal runs
 * in the background once the engine has answered the upload, which for 50 MB on a loaded
 * machine (Podman in CI) can take several seconds.
 */
async function tempFilesIn(id: string, dir: string): Promise<string[]> {
  let left: string[] = [];
  for (let i = 0; i < 200; i++) {
    const out = await asRoot(id, `ls -a ${dir}`);
    left = out.split('\n').filter((n) => n.startsWith('.berth-tmp-'));
    if (left.length === 0) return [];
    await new Promise((r) => setTimeout(r, 100));
  }
  return left;
}

engineSuite('files as the session user', () => {
  let user: Session;
  let root: Session;
  beforeAll(async () => {
    [user, root] = await Promise.all([
      // The fixtures below are made by root execs (`chown`), which Docker starts without
      // capabilities in a non-root container with no-new-privileges: this session opts out.
      // What it proves does not depend on it (file calls run as the user either way); the
      // harness test below runs with the default.
      createSession({
        sessionId: testSessionId('fp-user'),
        image: TEST_IMAGE,
        user: '1000:1000',
        labels: testLabels(),
        noNewPrivileges: false,
      }),
      createSession({ sessionId: testSessionId('fp-root'), image: TEST_IMAGE, labels: testLabels() }),
    ]);
    await asRoot(
      user.id,
      'echo secret > /root-secret && chmod 600 /root-secret && mkdir -p /home/u /locked && chown 1000:1000 /home/u && ' +
        'chmod 700 /locked && echo hidden > /locked/f && chmod 644 /locked/f',
    );
  });
  afterAll(async () => {
    await Promise.allSettled([user?.remove(), root?.remove()]);
  });

  test('a uid-1000 session cannot read a 0600 root file, nor one behind an unsearchable directory', async () => {
    for (const path of ['/root-secret', '/locked/f']) {
      const e = await expectBerthError(user.readFile(path), PermissionDeniedError);
      expect(e.code).toBe('E_PERMISSION_DENIED');
      expect(e.details).toMatchObject({ operation: 'read', path, user: '1000:1000' });
      await expectBerthError(user.openFile(path), PermissionDeniedError);
    }
    // A readable root file is read; a missing one is null, also under directories that do not
    // exist (nothing hides them), but not under an unsearchable one.
    expect((await user.readFile('/etc/passwd'))!.toString()).toContain('root:');
    expect(await user.readFile('/home/u/missing')).toBeNull();
    expect(await user.readFile('/tmp/no-such-dir/x')).toBeNull();
    expect(await user.readFile('/no-such-dir/deeper/x')).toBeNull();
    expect(await user.openFile('/tmp/no-such-dir/x')).toBeNull();
    expect(await user.readFile('/etc/passwd/x')).toBeNull();
    await expectBerthError(user.readFile('/locked/no-such-dir/x'), PermissionDeniedError);
  });

  test('a uid-1000 session cannot write /etc/passwd (buffered, streamed, large) and it stays as it was', async () => {
    const before = await asRoot(user.id, 'cat /etc/passwd');
    const mode = await statIn(user.id, '/etc/passwd');
    await expectBerthError(user.writeFile('/etc/passwd', 'evil::0:0::/:/bin/sh\n'), PermissionDeniedError);
    await expectBerthError(user.writeFile('/etc/passwd', randomBytes(2 * MIB)), PermissionDeniedError);
    await expectBerthError(
      user.writeFileStream('/etc/passwd', await fromStream([Buffer.from('evil::0:0::/:/bin/sh\n')])),
      PermissionDeniedError,
    );
    await expectBerthError(user.writeFile('/etc/new-file', 'x'), PermissionDeniedError);
    await expectBerthError(user.writeFile('/locked/g', 'x'), PermissionDeniedError);
    expect(await asRoot(user.id, 'cat /etc/passwd')).toBe(before);
    expect(await statIn(user.id, '/etc/passwd')).toBe(mode);
    expect(await asRoot(user.id, 'ls -a /etc | grep -c berth-tmp || true')).toBe('0\n');
  });

  test('the user writes its own files: new ones are its own, existing ones keep owner and mode', async () => {
    await user.writeFile('/home/u/a/b/new.txt', 'one');
    expect(await statIn(user.id, '/home/u/a/b/new.txt')).toBe('644 1000 1000');
    expect(await statIn(user.id, '/home/u/a/b')).toBe('755 1000 1000');
    await asRoot(user.id, 'chmod 600 /home/u/a/b/new.txt');
    await user.writeFile('/home/u/a/b/new.txt', 'two');
    await user.writeFile('/home/u/a/b/new.txt', randomBytes(3 * MIB));
    await user.writeFileStream('/home/u/a/b/new.txt', await fromStream([Buffer.from('three')]));
    expect(await statIn(user.id, '/home/u/a/b/new.txt')).toBe('600 1000 1000');
    expect((await user.readFile('/home/u/a/b/new.txt'))!.toString()).toBe('three');
    // A group-writable file of another owner is written in place: owner and group stay.
    await asRoot(user.id, 'echo old > /home/u/shared && chown 0:1000 /home/u/shared && chmod 664 /home/u/shared');
    await user.writeFile('/home/u/shared', 'new by 1000');
    expect(await statIn(user.id, '/home/u/shared')).toBe('664 0 1000');
    expect((await user.readFile('/home/u/shared'))!.toString()).toBe('new by 1000');
    // An explicit mode is applied.
    await user.writeFile('/home/u/a/b/new.txt', 'x', { mode: 0o640 });
    expect(await statIn(user.id, '/home/u/a/b/new.txt')).toBe('640 1000 1000');
  });

  test('setuid, setgid and sticky modes are refused for a non-root session, allowed for root', async () => {
    for (const mode of [0o4755, 0o2755, 0o1777]) {
      const e = await expectBerthError(user.writeFile('/home/u/s', 'x', { mode }), InvalidArgumentError);
      expect(e.details.field).toBe('mode');
    }
    expect(await user.readFile('/home/u/s')).toBeNull();
    await root.writeFile('/tmp/suid', 'x', { mode: 0o4755 });
    expect(await statIn(root.id, '/tmp/suid')).toBe('4755 0 0');
  });

  // A non-root session with `files: 'engine'` needs `noNewPrivileges: false` (README, Security
  // defaults): berth's rename after the upload runs as user 0, which Docker gives no capabilities
  // under no-new-privileges in a container whose user is not root. The test opts out explicitly.
  test("files: 'engine' keeps the engine's privileges", async () => {
    const engine = await createSession({
      sessionId: testSessionId('fp-engine'),
      image: TEST_IMAGE,
      user: '1000:1000',
      labels: testLabels(),
      noNewPrivileges: false,
      files: 'engine',
    });
    try {
      await asRoot(engine.id, 'echo secret > /root-secret && chmod 600 /root-secret');
      expect((await engine.readFile('/root-secret'))!.toString()).toBe('secret\n');
      await engine.writeFile('/etc/berth-engine-written', 'by engine');
      expect(await statIn(engine.id, '/etc/berth-engine-written')).toBe('644 1000 1000');
      // An existing root file keeps its owner even so.
      await engine.writeFile('/root-secret', 'replaced\n');
      expect(await statIn(engine.id, '/root-secret')).toBe('600 0 0');
    } finally {
      await engine.remove();
    }
    const { resumeSession } = await import('../../index.mjs');
    await expectBerthError(
      resumeSession({ sessionId: user.sessionId, files: 'root' as never }),
      InvalidArgumentError,
    );
  });

  test('the harness provider file methods act as the session user', async () => {
    const provider = createDockerSandboxProvider({ image: TEST_IMAGE, user: '1000:1000', labels: testLabels() });
    const sessionId = testSessionId('fp-harness');
    const sandbox = await provider.createSession({ sessionId });
    try {
      const mine = (await listRunContainers()).find((c) => c.name.includes(sessionId));
      await asRoot(mine!.id, 'echo secret > /root-secret && chmod 600 /root-secret');
      await expectBerthError(Promise.resolve(sandbox.readTextFile({ path: '/root-secret' })), PermissionDeniedError);
      await expectBerthError(
        Promise.resolve(sandbox.writeTextFile({ path: '/etc/passwd', content: 'evil\n' })),
        PermissionDeniedError,
      );
      await expectBerthError(
        Promise.resolve(sandbox.writeFile({ path: '/etc/passwd', content: await fromStream([Buffer.from('evil\n')]) })),
        PermissionDeniedError,
      );
      await sandbox.writeTextFile({ path: '/tmp/mine.txt', content: 'ok' });
      expect(await sandbox.readTextFile({ path: '/tmp/mine.txt' })).toBe('ok');
    } finally {
      await sandbox.destroy();
    }
  });

  test('trailing slashes are refused', async () => {
    await expectBerthError(root.writeFile('/work/newdir/', 'x'), InvalidArgumentError);
    await expectBerthError(root.readFile('/etc/passwd/'), InvalidArgumentError);
    expect((await asRoot(root.id, 'ls -d /work/newdir 2>/dev/null || echo none')).trim()).toBe('none');
  });

  test('links: one into an unsearchable directory is denied (read and write), a dangling one is absent and written through', async () => {
    await asRoot(
      user.id,
      'mkdir -p /home/u/links && ln -sfn /locked/f /home/u/links/hidden && ln -sfn /locked/nothing /home/u/links/hidden-absent && ' +
        'ln -sfn ../made.txt /home/u/links/dangling && ln -sfn /no-such-dir/x /home/u/links/nowhere && ' +
        'ln -sfn hidden /home/u/links/chain && chown -h 1000:1000 /home/u/links /home/u/links/*',
    );
    for (const path of ['/home/u/links/hidden', '/home/u/links/hidden-absent', '/home/u/links/chain']) {
      await expectBerthError(user.readFile(path), PermissionDeniedError);
      await expectBerthError(user.writeFile(path, 'x'), PermissionDeniedError);
    }
    expect((await asRoot(user.id, 'cat /locked/f')).trim()).toBe('hidden');
    // A dangling link is absent to a read, and a write goes through it, as `echo > link` would.
    expect(await user.readFile('/home/u/links/dangling')).toBeNull();
    await user.writeFile('/home/u/links/dangling', 'through');
    expect((await user.readFile('/home/u/made.txt'))!.toString()).toBe('through');
    expect(await statIn(user.id, '/home/u/made.txt')).toBe('644 1000 1000');
    // One whose target directory does not exist: nothing to write into.
    expect(await user.readFile('/home/u/links/nowhere')).toBeNull();
    await expectBerthError(user.writeFile('/home/u/links/nowhere', 'x'), InvalidArgumentError);
  });

  // Three write paths: the archive upload (a root session), the exec as the user (uid 1000), and
  // the exec fallback as root on a tmpfs (/dev/shm, which the archive API cannot reach).
  test.for(['root', 'user', 'tmpfs'] as const)(
    'an aborted 50 MB write over an existing file (%s) leaves it entirely old or entirely new, and no temp file',
    { timeout: 300_000 },
    async (who) => {
      const proxy = await startEngineProxy({ target: testSocketPath() });
      const sessionId = (who === 'user' ? user : root).sessionId;
      const { resumeSession } = await import('../../index.mjs');
      const s = await resumeSession({ sessionId, socketPath: proxy.socketPath });
      const dir = { root: '/tmp', user: '/home/u', tmpfs: '/dev/shm' }[who];
      const path = `${dir}/big.bin`;
      const oldData = randomBytes(4 * MIB);
      const newData = randomBytes(50 * MIB);
      const outcomes = { old: 0, new: 0 };
      try {
        for (const delay of [0, 2, 5, 10, 20, 40, 80, 150, 300, 600]) {
          await s.writeFile(path, oldData);
          const started = proxy.hold(
            who === 'root' ? request('PUT', /^\/containers\/[^/]+\/archive/) : request('POST', /^\/containers\/[^/]+\/exec$/),
          );
          const ac = new AbortController();
          const write = s.writeFile(path, newData, { abortSignal: ac.signal });
          // Settled either way: a write that finished before the abort leaves the new file.
          const outcome = write.then(
            () => undefined,
            (error: unknown) => error,
          );
          await started.arrived;
          started.release();
          await new Promise((r) => setTimeout(r, delay));
          ac.abort();
          const error = await outcome;
          if (error !== undefined) expect(AbortedError.isInstance(error)).toBe(true);
          const hash = (await asRoot(s.id, `sha256sum ${path}`)).split(' ')[0];
          expect([sha(oldData), sha(newData)]).toContain(hash);
          outcomes[hash === sha(oldData) ? 'old' : 'new'] += 1;
          expect(await tempFilesIn(s.id, dir)).toEqual([]);
        }
      } finally {
        await s.release();
        await proxy.close();
      }
      expect(outcomes.old + outcomes.new).toBe(10);
      expect(outcomes.old).toBeGreaterThan(0);
    },
  );

  // The window the loop above hits only by chance under load: the engine answered the upload,
  // the rename's exec is not started yet, and the abort drops the call there.
  test('an abort between the upload and its rename (root) leaves the old file and no temp file', { timeout: 120_000 }, async () => {
    const proxy = await startEngineProxy({ target: testSocketPath() });
    const { resumeSession } = await import('../../index.mjs');
    const s = await resumeSession({ sessionId: root.sessionId, socketPath: proxy.socketPath });
    const path = '/tmp/between.bin';
    const oldData = randomBytes(MIB);
    try {
      await s.writeFile(path, oldData);
      const upload = proxy.hold(request('PUT', /^\/containers\/[^/]+\/archive/));
      const ac = new AbortController();
      const outcome = s.writeFile(path, randomBytes(8 * MIB), { abortSignal: ac.signal }).then(
        () => undefined,
        (error: unknown) => error,
      );
      await upload.arrived;
      const rename = proxy.hold(request('POST', /^\/containers\/[^/]+\/exec$/));
      upload.release();
      await rename.arrived;
      ac.abort();
      expect(AbortedError.isInstance(await outcome)).toBe(true);
      rename.release();
      expect((await asRoot(s.id, `sha256sum ${path}`)).split(' ')[0]).toBe(sha(oldData));
      expect(await tempFilesIn(s.id, '/tmp')).toEqual([]);
    } finally {
      await s.release();
      await proxy.close();
    }
  });
});

engineSuite('no host escape by default', () => {

  test.for([
    ['/', '/host'],
    ['/var/run/docker.sock', '/var/run/docker.sock'],
    ['/run', '/hostrun'],
    ['/proc', '/hostproc'],
    ['/sys/fs', '/hostsys'],
    ['/dev', '/hostdev'],
    // Another engine's socket (rootful Podman's, as the CI runs it; on the Podman run, berth's
    // own) and the directory holding it: a unix socket bound on this host.
    ['/run/berth-podman/podman.sock', '/mnt/engine.sock'],
    ['/run/berth-podman', '/mnt/engine'],
    // Engine state and runtime directories, what is under them, and their parents.
    ['/run/docker/containerd/containerd.sock', '/mnt/containerd.sock'],
    ['/var/run/docker', '/mnt/docker'],
    ['/run/containerd', '/mnt/containerd'],
    ['/run/containers', '/mnt/containers'],
    ['/var/lib/docker', '/mnt/docker-state'],
    ['/var/lib/containers', '/mnt/containers-state'],
    ['/var/lib', '/mnt/var-lib'],
    // The host's system configuration, and anything under it writable.
    ['/etc', '/mnt/etc'],
    ['/boot', '/mnt/boot'],
    ['/etc/cron.d', '/mnt/cron.d'],
  ])('binding %s is E_INVALID_ARGUMENT and creates nothing', async ([source, target]) => {
    const sessionId = testSessionId('escape');
    const e = await expectBerthError(
      createSession({ sessionId, image: TEST_IMAGE, labels: testLabels(), mounts: [{ source: source!, target: target! }] }),
      InvalidArgumentError,
    );
    expect(e.details.field).toBe('mounts[0].source');
    expect(e.message).toContain('allowHostEscape');
    expect(await listRunContainers()).toEqual([]);
  });

  test.for([
    ['/var/lib/containers', '/mnt/containers-state'],
    ['/run/containerd', '/mnt/containerd'],
    ['/etc', '/mnt/etc'],
    ['/boot', '/mnt/boot'],
  ])('binding %s read-only is refused too', async ([source, target]) => {
    const e = await expectBerthError(
      createSession({
        sessionId: testSessionId('escape-ro'),
        image: TEST_IMAGE,
        labels: testLabels(),
        mounts: [{ source: source!, target: target!, readOnly: true }],
      }),
      InvalidArgumentError,
    );
    expect(e.details.field).toBe('mounts[0].source');
    expect(await listRunContainers()).toEqual([]);
  });

  test('any unix socket, a link to it and a directory holding one are refused; allowHostEscape opts in', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'berth-escape-'));
    const sock = join(dir, 'inner', 'any.sock');
    await mkdir(join(dir, 'inner'));
    const server: Server = createServer();
    await new Promise<void>((resolve, reject) => server.once('error', reject).listen(sock, resolve));
    await symlink(sock, join(dir, 'link.sock'));
    try {
      for (const [i, source] of [sock, join(dir, 'link.sock'), join(dir, 'inner'), dir].entries()) {
        const e = await expectBerthError(
          createSession({
            sessionId: testSessionId('escape-any'),
            image: TEST_IMAGE,
            labels: testLabels(),
            mounts: [{ source: '/etc/hosts', target: '/mnt/hosts', readOnly: true }, { source, target: '/mnt/s' }],
          }),
          InvalidArgumentError,
        );
        expect(e.details.field, `${i}`).toBe('mounts[1].source');
        expect(e.message).toMatch(/unix socket/);
      }
      expect(await listRunContainers()).toEqual([]);
      const s = await createSession({
        sessionId: testSessionId('escape-any-ok'),
        image: TEST_IMAGE,
        labels: testLabels(),
        allowHostEscape: true,
        mounts: [{ source: sock, target: '/mnt/s' }],
      });
      try {
        expect((await s.exec(['test', '-S', '/mnt/s'])).exitCode).toBe(0);
      } finally {
        await s.remove();
      }
    } finally {
      await new Promise((r) => server.close(r));
      await rm(dir, { recursive: true, force: true });
    }
  });

  test('a single file under /etc binds read-only by default', async () => {
    const s = await createSession({
      sessionId: testSessionId('etc-ro'),
      image: TEST_IMAGE,
      labels: testLabels(),
      mounts: [{ source: '/etc/hosts', target: '/mnt/hosts', readOnly: true }],
    });
    try {
      const out = await s.exec(['cat', '/mnt/hosts']);
      expect(out.exitCode).toBe(0);
      expect(out.stdout.toString()).toContain('localhost');
    } finally {
      await s.remove();
    }
  });

  test('the engine socket berth reached is refused too, and allowHostEscape opts in', async () => {
    const socket = testSocketPath();
    await expectBerthError(
      createSession({
        sessionId: testSessionId('escape-sock'),
        image: TEST_IMAGE,
        labels: testLabels(),
        mounts: [{ source: socket, target: '/engine.sock' }],
      }),
      InvalidArgumentError,
    );
    const s = await createSession({
      sessionId: testSessionId('escape-ok'),
      image: TEST_IMAGE,
      labels: testLabels(),
      allowHostEscape: true,
      mounts: [{ source: '/', target: '/host', readOnly: true }],
    });
    try {
      expect((await s.exec(['ls', '/host/etc'])).exitCode).toBe(0);
    } finally {
      await s.remove();
    }
  });

  test('secure defaults: no-new-privileges, NET_RAW dropped, a pids limit; each has its opt-out', async () => {
    const s = await createSession({ sessionId: testSessionId('defaults'), image: TEST_IMAGE, labels: testLabels() });
    try {
      const status = (await s.exec(['cat', '/proc/self/status'])).stdout.toString();
      expect(status).toMatch(/NoNewPrivs:\s+1/);
      const capEff = BigInt(`0x${/CapEff:\s+([0-9a-f]+)/.exec(status)![1]}`);
      expect(capEff & (1n << 13n)).toBe(0n); // CAP_NET_RAW
      const pids = (await s.exec(['sh', '-c', 'cat /sys/fs/cgroup/pids.max 2>/dev/null || cat /sys/fs/cgroup/pids/pids.max'])).stdout
        .toString()
        .trim();
      expect(pids).toBe('4096');
    } finally {
      await s.remove();
    }
    const open = await createSession({
      sessionId: testSessionId('opt-out'),
      image: TEST_IMAGE,
      labels: testLabels(),
      noNewPrivileges: false,
      capDrop: [],
      pidsLimit: 8192,
    });
    try {
      const status = (await open.exec(['cat', '/proc/self/status'])).stdout.toString();
      expect(status).toMatch(/NoNewPrivs:\s+0/);
      const capEff = BigInt(`0x${/CapEff:\s+([0-9a-f]+)/.exec(status)![1]}`);
      expect(capEff & (1n << 13n)).toBe(1n << 13n);
      const pids = (await open.exec(['sh', '-c', 'cat /sys/fs/cgroup/pids.max 2>/dev/null || cat /sys/fs/cgroup/pids/pids.max'])).stdout
        .toString()
        .trim();
      expect(pids).toBe('8192');
    } finally {
      await open.remove();
    }
  });

  test('small items: host network with ports, empty prefix, workDir with ..', async () => {
    const base = { sessionId: testSessionId('small'), image: TEST_IMAGE, labels: testLabels() };
    let e = await expectBerthError(createSession({ ...base, networkMode: 'host', ports: [8080] }), InvalidArgumentError);
    expect(e.details.field).toBe('ports');
    e = await expectBerthError(createSession({ ...base, prefix: '' }), InvalidArgumentError);
    expect(e.details.field).toBe('prefix');
    e = await expectBerthError(createSession({ ...base, workDir: '/work/../etc' }), InvalidArgumentError);
    expect(e.details.field).toBe('workDir');
    expect(await listRunContainers()).toEqual([]);
  });
});
