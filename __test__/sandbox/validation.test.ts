// Bad input is E_INVALID_ARGUMENT before any engine call: every case is run twice, against the
// real engine (nothing new appears) and against a socket that does not exist (still
// E_INVALID_ARGUMENT, not E_ENGINE_UNAVAILABLE, so no connection was tried). An engine that
// cannot be reached is E_ENGINE_UNAVAILABLE naming what was tried.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect } from 'vitest';
import { createContainerHandle } from '../../container.mjs';
import { createDockerSandboxProvider } from '../../harness.mjs';
import {
  createSession,
  engineInfo,
  ensureImage,
  EngineUnavailableError,
  InvalidArgumentError,
  listSessions,
  listTemplates,
  peek,
  pruneTemplates,
  reapOrphans,
  recreateSession,
  removeTemplate,
  resumeSession,
  SessionNotFoundError,
  verifySession,
  type CreateSessionOptions,
  type Session,
} from '../../index.mjs';
import { killAllChildren, startChild } from '../helpers/child.js';
import { inspectContainer } from '../helpers/engine-http.mjs';
import { startEngineProxy } from '../helpers/engine-proxy.mjs';
import { expectBerthError } from '../helpers/expect-error.js';
import { sessionTest as test } from '../helpers/fixtures.js';
import { listRunContainers } from '../helpers/leak-check.mjs';
import { testLabels, testSessionId } from '../helpers/run-label.mjs';
import { TEST_IMAGE } from '../helpers/test-image.mjs';
import { engineSuite } from '../helpers/suite.js';

const NO_ENGINE = '/nonexistent.sock';

/** What an unknown option key must be rejected with: the key, the allowed ones, the likely one. */
function expectUnknownKey(error: InvalidArgumentError, field: string, suggestion?: string): void {
  expect(error.details.field).toBe(field);
  expect(error.details.reason).toMatch(/^unknown option/);
  expect(error.details.allowed).toEqual(expect.arrayContaining([expect.any(String)]));
  if (suggestion === undefined) {
    expect(error.details.suggestion).toBeUndefined();
  } else {
    expect(error.details.suggestion).toBe(suggestion);
    expect(error.message).toContain(`did you mean \`${suggestion}\``);
    // The suggestion is one of the allowed keys (a nested one under its path).
    expect(error.details.allowed).toContain(suggestion.replace(/^.*\./, ''));
  }
  expect(error.message).toContain(`\`${field}\``);
}

/**
 * Runs `call` with the real engine and with {@link NO_ENGINE}; both must be E_INVALID_ARGUMENT
 * (naming `field`), and the run's containers are the same before and after.
 */
async function expectInvalid(
  call: (socketPath: string | undefined) => Promise<unknown>,
  field?: string | RegExp,
): Promise<void> {
  const before = await listRunContainers();
  for (const socketPath of [undefined, NO_ENGINE]) {
    const error = await expectBerthError(call(socketPath), InvalidArgumentError);
    if (typeof field === 'string') expect(error.details.field).toBe(field);
    else if (field) expect(error.details.field).toMatch(field);
    expect(error.details.reason).toEqual(expect.any(String));
  }
  expect(await listRunContainers()).toEqual(before);
}

const badSessionIds: [string, unknown][] = [
  ['empty', ''],
  ['257 UTF-16 units', 'x'.repeat(257)],
  ['257 units ending in a pair', `${'x'.repeat(255)}😀`],
  ['a newline', 'a\nb'],
  ['NUL', 'a\u0000b'],
  ['DEL', 'a\u007f'],
  ['a C1 control', 'a\u0085'],
  ['a lone high surrogate', 'a\ud800'],
  ['a lone low surrogate', '\udc00b'],
  ['a reversed pair', '\ude00\ud83d'],
  ['a number', 42],
  ['undefined', undefined],
];

/** createSession options that are wrong in one field each; `field` is the name the error gives. */
const badCreateOptions: [string, Partial<Record<keyof CreateSessionOptions, unknown>>, string | RegExp][] = [
  ['port 0', { ports: [0] }, 'ports[0]'],
  ['port 65536', { ports: [65536] }, 'ports[0]'],
  ['port 1.5', { ports: [1.5] }, 'ports[0]'],
  ['port -1', { ports: [-1] }, 'ports[0]'],
  ['port NaN', { ports: [8080, NaN] }, 'ports[1]'],
  ["ports 'x'", { ports: 'x' }, 'ports'],
  ["port '80'", { ports: ['80'] }, 'ports[0]'],
  ['an empty env key', { env: { '': 'v' } }, /^env/],
  ['an env key with =', { env: { 'A=B': 'v' } }, /^env/],
  ['a non-string env value', { env: { A: 1 } }, 'env.A'],
  ['an empty image', { image: '' }, 'image'],
  ['a blank image', { image: '  ' }, 'image'],
  ['a non-string image', { image: 7 }, 'image'],
  ['an image reference the engine cannot parse', { image: 'UPPER:1' }, 'image'],
  ['an image with an invalid tag', { image: 'busybox:-x' }, 'image'],
  ['a CPU limit that would round to no limit', { cpus: 1e-12 }, 'cpus'],
  ['an env key with a lone surrogate', { env: { 'K\ud800': 'v' } }, /^env/],
  ['an env value with a lone surrogate', { env: { K: 'v\udc00' } }, 'env.K'],
  ['a workDir with a lone surrogate', { workDir: '/w\ud800' }, 'workDir'],
  ['a relative workDir', { workDir: 'work' }, 'workDir'],
  ['a relative mount source', { mounts: [{ source: 'relative/dir', target: '/mnt' }] }, 'mounts[0].source'],
  ['a relative mount target', { mounts: [{ source: '/tmp', target: 'mnt' }] }, 'mounts[0].target'],
  ['a mount without a target', { mounts: [{ source: '/tmp' }] }, 'mounts[0].target'],
  ['the reserved label key dev.berth.managed', { labels: { 'dev.berth.managed': 'true' } }, /^labels/],
  ['a reserved label key under dev.berth.', { labels: { 'dev.berth.session-id': 'other' } }, /^labels/],
  ['an empty setup argv', { setupCommands: [[]] }, 'setupCommands[0]'],
  ['a non-string setup command', { setupCommands: [7] }, 'setupCommands[0]'],
  ['setupCommands as a string', { setupCommands: 'echo hi' }, 'setupCommands'],
  ['a user with a space', { user: 'a b' }, 'user'],
  ['an unknown engine', { engine: 'lxc' }, 'engine'],
  ['a prefix with a lone surrogate', { prefix: '\ud800' }, 'prefix'],
  ['memoryBytes under the engine minimum', { memoryBytes: 1024 }, 'memoryBytes'],
  ['pidsLimit -1', { pidsLimit: -1 }, 'pidsLimit'],
  ['pidsLimit 0', { pidsLimit: 0 }, 'pidsLimit'],
  ['pidsLimit 1.5', { pidsLimit: 1.5 }, 'pidsLimit'],
  ["pidsLimit '64'", { pidsLimit: '64' }, 'pidsLimit'],
  ['pidsLimit 2**40', { pidsLimit: 2 ** 40 }, 'pidsLimit'],
  ['100,000 ports', { ports: Array.from({ length: 100_000 }, (_, i) => (i % 65535) + 1) }, 'ports'],
  ['a port listed twice', { ports: [8080, 8081, 8080] }, 'ports[2]'],
  ['a 300,000-character user', { user: 'u'.repeat(300_000) }, 'user'],
  ['a 300,000-character networkMode', { networkMode: 'n'.repeat(300_000) }, 'networkMode'],
  ['an unknown capability', { capDrop: ['NET_RAW', 'NOPE'] }, 'capDrop[1]'],
  ['an unknown platform', { platform: 'windows/zz' }, 'platform'],
  ['an architecture no image is built for', { platform: 'linux/zz' }, 'platform'],
  ['a workDir over PATH_MAX', { workDir: `/${'w'.repeat(4095)}` }, 'workDir'],
  ['a setup program name over PATH_MAX', { setupCommands: [[`/${'p'.repeat(4095)}`]] }, 'setupCommands[0][0]'],
];

engineSuite('validation', () => {

  describe.each(badSessionIds)('session id: %s', (_, sessionId) => {
    test('createSession, resumeSession and peek reject it', async ({ labels }) => {
      await expectInvalid((socketPath) => createSession({ sessionId: sessionId as string, image: TEST_IMAGE, labels, socketPath }), 'sessionId');
      await expectInvalid((socketPath) => resumeSession({ sessionId: sessionId as string, socketPath }), 'sessionId');
      await expectInvalid((socketPath) => peek(sessionId as string, { socketPath }), 'sessionId');
    });
  });

  test('256 UTF-16 units (a pair counting two) is a valid session id', async () => {
    for (const sessionId of ['x'.repeat(256), '😀'.repeat(128)]) {
      expect(await peek(sessionId)).toBeNull();
    }
  });

  test.for(badCreateOptions)('createSession with %s names the field', async ([, options, field], { sessionId, labels }) => {
    await expectInvalid((socketPath) => createSession({ sessionId, image: TEST_IMAGE, labels, socketPath, ...(options as object) }), field);
  });

  test('pidsLimit has one rule and one message, the core\'s, for a create and a resume spec', async ({ sessionId, labels }) => {
    const reason = "must be a whole number of processes from 1 to 4194304 (Linux's PID_MAX_LIMIT)";
    for (const pidsLimit of [-1, 0, 1.5, 2 ** 40, 2 ** 53 + 2]) {
      const created = await expectBerthError(createSession({ sessionId, image: TEST_IMAGE, labels, socketPath: NO_ENGINE, pidsLimit }), InvalidArgumentError);
      expect(created.details).toMatchObject({ field: 'pidsLimit', reason });
      const resumed = await expectBerthError(resumeSession({ sessionId, spec: { pidsLimit }, socketPath: NO_ENGINE }), InvalidArgumentError);
      expect(resumed.details).toMatchObject({ field: 'spec.pidsLimit', reason });
    }
  });

  // Each range the core owns, below, at and above its bounds: a value at a bound passes every
  // check (with no engine it then fails to connect), one past it is the core's E_INVALID_ARGUMENT.
  const DAY30 = 2_592_000_000;
  const INT32 = 2_147_483_647;
  const bounds: [string, number[], number[], string?][] = [
    ['removeAfterStopMs', [0, DAY30], [-1, DAY30 + 1, 0.5], 'from 0 to 2592000000 (30 days)'],
    ['timeoutMs', [0, DAY30], [-1, DAY30 + 1, 0.5], 'from 0 to 2592000000 (30 days)'],
    ['memoryBytes', [6_291_456], [-1, 6_291_455], '6 MiB'],
    ['cpus', [0.01, 1024], [0, 0.009, 1024.5], 'from 0.01 to 1024'],
    ['connectTimeoutMs', [1, INT32], [0, -1, INT32 + 1], `from 1 to ${INT32}`],
  ];
  test.for(bounds)('createSession %s: below, at and above its bounds, the core\'s rule', async ([field, ok, bad, reason], { sessionId, labels }) => {
    for (const v of ok) {
      await expectBerthError(createSession({ sessionId, image: TEST_IMAGE, labels, socketPath: NO_ENGINE, [field]: v }), EngineUnavailableError);
    }
    for (const v of bad) {
      const error = await expectBerthError(createSession({ sessionId, image: TEST_IMAGE, labels, socketPath: NO_ENGINE, [field]: v }), InvalidArgumentError);
      expect(error.details.field).toBe(field);
      if (reason && v >= 0 && Number.isInteger(v)) expect(error.details.reason).toContain(reason);
    }
  });

  test('createDockerSandboxProvider checks its lifetimes with the core\'s rule when it is made', () => {
    for (const field of ['removeAfterStopMs', 'timeoutMs']) {
      for (const v of [0, DAY30, null]) expect(() => createDockerSandboxProvider({ image: TEST_IMAGE, [field]: v })).not.toThrow();
      for (const v of [-1, DAY30 + 1, 1.5, '60000']) {
        let error: unknown;
        try {
          createDockerSandboxProvider({ image: TEST_IMAGE, [field]: v } as never);
        } catch (e) {
          error = e;
        }
        expect(error).toBeInstanceOf(InvalidArgumentError);
        expect((error as InvalidArgumentError).details.field).toBe(field);
        if (v === DAY30 + 1) expect((error as InvalidArgumentError).details.reason).toContain('from 0 to 2592000000 (30 days)');
      }
    }
  });

  test('resumeSession and peek check their options', async ({ sessionId }) => {
    await expectInvalid((socketPath) => resumeSession({ sessionId, prefix: 'a\u0000', socketPath }), 'prefix');
    await expectInvalid((socketPath) => resumeSession({ sessionId, onDrift: 'ignore' as never, socketPath }), 'onDrift');
    await expectInvalid((socketPath) => peek(sessionId, { prefix: 5 as never, socketPath }), 'prefix');
    await expectInvalid((socketPath) => peek(sessionId, { engine: 'rkt' as never, socketPath }), 'engine');
  });

  test('removeTemplate checks the key before it connects', async () => {
    for (const key of ['', 'UPPER', '-lead', 'a b']) {
      await expectInvalid((socketPath) => removeTemplate(key, { socketPath }));
    }
  });

  describe('exec', () => {
    let session: Session;
    beforeAll(async () => {
      session = await createSession({ sessionId: testSessionId('validation'), image: TEST_IMAGE, labels: testLabels() });
    });
    afterAll(async () => {
      // None of the rejected execs ran: the marker they would have made is absent.
      expect((await session.exec(['test', '-e', '/tmp/must-not-run'])).exitCode).toBe(1);
      await session?.remove();
    });

    const touch = ['touch', '/tmp/must-not-run'];
    test.for([
      ['an empty argv', [], {}, 'argv'],
      ['an empty program', [''], {}, 'argv'],
      ['a non-string argument', ['touch', 1], {}, 'argv[1]'],
      ['a shell string instead of argv', 'touch /tmp/must-not-run', {}, 'argv'],
      ['timeoutMs 0', touch, { timeoutMs: 0 }, 'timeoutMs'],
      ['timeoutMs 1.5', touch, { timeoutMs: 1.5 }, 'timeoutMs'],
      ['a relative cwd', touch, { cwd: 'tmp' }, 'cwd'],
      ['an env key with =', touch, { env: { 'A=B': 'x' } }, /^env/],
      ['a user with a space', touch, { user: 'a b' }, 'user'],
      ['a negative maxBufferBytes', touch, { maxBufferBytes: -1 }, 'maxBufferBytes'],
      ['stdin of the wrong type', touch, { stdin: 12 }, 'stdin'],
    ] as const)('rejects %s and runs nothing', async ([, argv, options, field]) => {
      const error = await expectBerthError(session.exec(argv as never, options as never), InvalidArgumentError);
      if (typeof field === 'string') expect(error.details.field).toBe(field);
      else expect(error.details.field).toMatch(field);
    });

    test('setTimeout, stop and writeFile: the core\'s ranges, at and above their bounds, change nothing', async () => {
      for (const ms of [-1, DAY30 + 1, 0.5]) {
        expect((await expectBerthError(session.setTimeout(ms), InvalidArgumentError)).details.field).toBe('ms');
      }
      const over = await expectBerthError(session.setTimeout(DAY30 + 1), InvalidArgumentError);
      expect(over.details.reason).toContain('from 0 to 2592000000 (30 days)');
      expect(await session.setTimeout(DAY30)).toBeGreaterThan(Date.now());
      for (const timeoutMs of [-1, INT32 + 1]) {
        expect((await expectBerthError(session.stop({ timeoutMs }), InvalidArgumentError)).details.field).toBe('timeoutMs');
      }
      for (const mode of [-1, 0o10000, 2 ** 32]) {
        expect((await expectBerthError(session.writeFile('/tmp/must-not-run', 'x', { mode }), InvalidArgumentError)).details.field).toBe('mode');
      }
      for (const maxBytes of [-1]) {
        expect((await expectBerthError(session.readFile('/etc/hostname', { maxBytes }), InvalidArgumentError)).details.field).toBe('maxBytes');
      }
      expect((await session.exec(['true'])).exitCode).toBe(0);
    });

    test('hostAddress rejects a port out of range or never published', async () => {
      for (const port of [0, 65536, 1.5]) {
        expect((await expectBerthError(session.hostAddress(port), InvalidArgumentError)).details.field).toBe('port');
      }
      expect((await expectBerthError(session.hostAddress(8080), InvalidArgumentError)).details.field).toBe('port');
    });
  });

  describe('an engine that cannot be reached', () => {
    test.for([
      ['createSession', (sessionId: string, socketPath: string) => createSession({ sessionId, image: TEST_IMAGE, labels: testLabels(), socketPath })],
      ['resumeSession', (sessionId: string, socketPath: string) => resumeSession({ sessionId, socketPath })],
      ['peek', (sessionId: string, socketPath: string) => peek(sessionId, { socketPath })],
    ] as const)('%s: E_ENGINE_UNAVAILABLE naming the socket tried and where it came from', async ([, call], { sessionId }) => {
      const error = await expectBerthError(call(sessionId, NO_ENGINE), EngineUnavailableError);
      expect(error.details.tried).toContain(NO_ENGINE);
      expect(error.details.tried).toContain('socketPath');
      expect(error.details.hint).toEqual(expect.any(String));
      expect(error.message).toContain(NO_ENGINE);
    });

    test('a socket that hangs up at once, and a path that is not a socket, are E_ENGINE_UNAVAILABLE too', async ({ sessionId }) => {
      const dir = mkdtempSync(join(tmpdir(), 'berth-no-engine-'));
      const hangUp = join(dir, 'hang-up.sock');
      const server = createServer((socket) => socket.destroy());
      await new Promise<void>((resolve) => server.listen(hangUp, resolve));
      const plainFile = join(dir, 'plain-file.sock');
      writeFileSync(plainFile, '');
      try {
        for (const socketPath of [hangUp, plainFile]) {
          const error = await expectBerthError(peek(sessionId, { socketPath }), EngineUnavailableError);
          expect(error.details.tried).toContain(socketPath);
        }
      } finally {
        await new Promise<void>((resolve) => server.close(() => resolve()));
        rmSync(dir, { recursive: true, force: true });
      }
    });
  });
});

engineSuite('unknown option keys', () => {

  type Ids = { sessionId: string; labels: Record<string, string> };
  /** [entry point, call with a misspelt or unknown key, the field named, the suggestion]. */
  const entryPoints: [string, (ids: Ids, socketPath: string | undefined) => Promise<unknown>, string, string?][] = [
    ['createSession { imagee }', ({ sessionId, labels }, socketPath) => createSession({ sessionId, image: TEST_IMAGE, imagee: TEST_IMAGE, labels, socketPath } as never), 'imagee', 'image'],
    ['createSession { sesionId }', ({ sessionId, labels }, socketPath) => createSession({ sesionId: sessionId, image: TEST_IMAGE, labels, socketPath } as never), 'sesionId', 'sessionId'],
    ['createSession { bogus }', ({ sessionId, labels }, socketPath) => createSession({ sessionId, image: TEST_IMAGE, labels, socketPath, bogus: 1 } as never), 'bogus'],
    ['createSession mounts[0].readonly', ({ sessionId, labels }, socketPath) => createSession({ sessionId, image: TEST_IMAGE, labels, socketPath, mounts: [{ source: '/tmp', target: '/t', readonly: true }] } as never), 'mounts[0].readonly', 'mounts[0].readOnly'],
    ['recreateSession { takeover }', ({ sessionId, labels }, socketPath) => recreateSession({ sessionId, image: TEST_IMAGE, labels, socketPath, takeover: true } as never), 'takeover', 'takeOver'],
    ['resumeSession { takeover }', ({ sessionId }, socketPath) => resumeSession({ sessionId, takeover: true, socketPath } as never), 'takeover', 'takeOver'],
    ['resumeSession spec.imagee', ({ sessionId }, socketPath) => resumeSession({ sessionId, spec: { imagee: 'x' }, socketPath } as never), 'spec.imagee', 'spec.image'],
    ['verifySession { reapir }', ({ sessionId }, socketPath) => verifySession(sessionId, { reapir: false, socketPath } as never), 'reapir', 'repair'],
    ['verifySession spec.writeablePaths', ({ sessionId }, socketPath) => verifySession(sessionId, { spec: { writeablePaths: ['/w'] }, socketPath } as never), 'spec.writeablePaths', 'spec.writablePaths'],
    ['peek { bogus }', ({ sessionId }, socketPath) => peek(sessionId, { bogus: 1, socketPath } as never), 'bogus'],
    ['peek { prefx }', ({ sessionId }, socketPath) => peek(sessionId, { prefx: 'p', socketPath } as never), 'prefx', 'prefix'],
    ['listSessions { bogus }', (_, socketPath) => listSessions({ bogus: 1, socketPath } as never), 'bogus'],
    ['listSessions { includeUnmanged }', (_, socketPath) => listSessions({ includeUnmanged: true, socketPath } as never), 'includeUnmanged'.replace('Unmanaged', 'Unmanged'), 'includeUnmanaged'],
    ['reapOrphans { dryrun }', ({ labels }, socketPath) => reapOrphans({ labels, dryrun: true, socketPath } as never), 'dryrun', 'dryRun'],
    ['engineInfo { socket }', (_, socketPath) => engineInfo({ socket: '/x', socketPath } as never), 'socket'],
    ['engineInfo { conectTimeoutMs }', (_, socketPath) => engineInfo({ conectTimeoutMs: 5, socketPath } as never), 'conectTimeoutMs', 'connectTimeoutMs'],
    ['ensureImage { platfrom }', (_, socketPath) => ensureImage(TEST_IMAGE, { platfrom: 'linux/amd64', socketPath } as never), 'platfrom', 'platform'],
    ['listTemplates { lables }', ({ labels }, socketPath) => listTemplates({ lables: labels, socketPath } as never), 'lables', 'labels'],
    ['removeTemplate { labels }', ({ labels }, socketPath) => removeTemplate('k', { labels, socketPath } as never), 'labels'],
    ['pruneTemplates { bogus }', (_, socketPath) => pruneTemplates({ bogus: 1, socketPath } as never), 'bogus'],
    ['createContainerHandle { bogus }', ({ sessionId }, socketPath) => Promise.resolve().then(() => createContainerHandle(sessionId, { image: TEST_IMAGE, bogus: 1, socketPath } as never).ready()), 'bogus'],
    ['createContainerHandle { workdir }', ({ sessionId }, socketPath) => Promise.resolve().then(() => createContainerHandle(sessionId, { image: TEST_IMAGE, workdir: '/w', socketPath } as never).ready()), 'workdir', 'workDir'],
    ['createDockerSandboxProvider { bogus }', ({ sessionId }, socketPath) => Promise.resolve().then(() => createDockerSandboxProvider({ image: TEST_IMAGE, bogus: 1, socketPath } as never).createSession({ sessionId })), 'bogus'],
    ['createDockerSandboxProvider { sessionId }', ({ sessionId }, socketPath) => Promise.resolve().then(() => createDockerSandboxProvider({ image: TEST_IMAGE, sessionId, socketPath } as never).createSession({ sessionId })), 'sessionId'],
    ['createDockerSandboxProvider { timeoutMS }', ({ sessionId }, socketPath) => Promise.resolve().then(() => createDockerSandboxProvider({ image: TEST_IMAGE, timeoutMS: 1, socketPath } as never).createSession({ sessionId })), 'timeoutMS', 'timeoutMs'],
  ];

  test.for(entryPoints)('%s: E_INVALID_ARGUMENT naming the key, no engine call, nothing created', async ([, call, field, suggestion], { sessionId, labels }) => {
    const proxy = await startEngineProxy();
    try {
      const before = await listRunContainers();
      // Through a counting proxy (no request at all) and with no engine (no connection tried).
      for (const socketPath of [proxy.socketPath, NO_ENGINE]) {
        const { value: error } = await proxy.during(() => expectBerthError(call({ sessionId, labels }, socketPath), InvalidArgumentError));
        expectUnknownKey(error, field, suggestion);
      }
      expect(proxy.requests).toEqual([]);
      expect(await listRunContainers()).toEqual(before);
    } finally {
      await proxy.close();
    }
  });

  test('the provider and the container handle reject an unknown key synchronously, when made', ({ sessionId }) => {
    const bad = [
      () => createDockerSandboxProvider({ image: TEST_IMAGE, bogus: 1 } as never),
      () => createContainerHandle(sessionId, { image: TEST_IMAGE, bogus: 1 } as never),
    ];
    for (const make of bad) {
      expect(make).toThrow(InvalidArgumentError);
      try {
        make();
      } catch (error) {
        expectUnknownKey(error as InvalidArgumentError, 'bogus');
      }
    }
  });

  test('undefined-valued known keys, and keys a spec may carry from its create options, pass', async ({ sessionId, labels }) => {
    expect(await peek(sessionId, { prefix: undefined, abortSignal: undefined })).toBeNull();
    // Scoped to a label nothing carries: a real run that must find nothing to remove.
    expect(await reapOrphans({ labels: { ...labels, 'berth.test-case': sessionId }, dryRun: undefined })).toMatchObject({ removed: [] });
    // A resume's spec may be the very options the session was created with.
    const createdWith: CreateSessionOptions = { sessionId, image: TEST_IMAGE, labels, removeAfterStopMs: 1000, socketPath: undefined };
    await expectBerthError(resumeSession({ sessionId, spec: createdWith }), SessionNotFoundError);
    await expectBerthError(verifySession(sessionId, { spec: createdWith }), SessionNotFoundError);
  });

  describe('a session method', () => {
    let proxy: Awaited<ReturnType<typeof startEngineProxy>>;
    let session: Session;
    const marker = '/tmp/must-not-run';
    beforeAll(async () => {
      proxy = await startEngineProxy();
      session = await createSession({ sessionId: testSessionId('unknown-keys'), image: TEST_IMAGE, labels: testLabels(), socketPath: proxy.socketPath });
    });
    afterAll(async () => {
      // None of the rejected calls ran: the marker they would have made is absent.
      expect((await session.exec(['test', '-e', marker])).exitCode).toBe(1);
      await session?.remove();
      await proxy?.close();
    });

    const methods: [string, (s: Session) => Promise<unknown>, string, string?][] = [
      ['exec { cwdd }', (s) => s.exec(['touch', marker], { cwdd: '/' } as never), 'cwdd', 'cwd'],
      ['exec { timeout }', (s) => s.exec(['touch', marker], { timeout: 5 } as never), 'timeout', 'timeoutMs'],
      ['spawn { maxBufferBytes }', (s) => s.spawn(['touch', marker], { maxBufferBytes: 5 } as never), 'maxBufferBytes'],
      ['spawn { envv }', (s) => s.spawn(['touch', marker], { envv: {} } as never), 'envv', 'env'],
      ['readFile { signal }', (s) => s.readFile('/etc/hostname', { signal: new AbortController().signal } as never), 'signal'],
      ['openFile { abortsignal }', (s) => s.openFile('/etc/hostname', { abortsignal: undefined } as never), 'abortsignal', 'abortSignal'],
      ['writeFile { mdoe }', (s) => s.writeFile(marker, 'x', { mdoe: 0o600 } as never), 'mdoe', 'mode'],
      ['writeFileStream { bogus }', (s) => s.writeFileStream(marker, [Buffer.from('x')], { bogus: 1 } as never), 'bogus'],
      ['setTimeout { bogus }', (s) => s.setTimeout(60_000, { bogus: 1 } as never), 'bogus'],
      ['commitTemplate { bogus }', (s) => s.commitTemplate('k', { bogus: 1 } as never), 'bogus'],
      ['hostAddress { bogus }', (s) => s.hostAddress(80, { bogus: 1 } as never), 'bogus'],
      ['workingDirectory { bogus }', (s) => s.workingDirectory({ bogus: 1 } as never), 'bogus'],
      ['setNetworkPolicy policy.allowedHosts', (s) => s.setNetworkPolicy({ mode: 'deny-all', allowedHosts: [] } as never), 'policy.allowedHosts'],
      ['setNetworkPolicy { bogus }', (s) => s.setNetworkPolicy({ mode: 'deny-all' }, { bogus: 1 } as never), 'bogus'],
      ['stop { forse }', (s) => s.stop({ forse: true } as never), 'forse', 'force'],
      ['remove { forse }', (s) => s.remove({ forse: true } as never), 'forse', 'force'],
      ['release { bogus }', (s) => s.release({ bogus: 1 } as never), 'bogus'],
    ];

    test.for(methods)('%s: E_INVALID_ARGUMENT naming the key, no engine call', async ([, call, field, suggestion]) => {
      const { value: error, requests } = await proxy.during(() => expectBerthError(call(session), InvalidArgumentError));
      expectUnknownKey(error, field, suggestion);
      expect(requests).toEqual([]);
    });

    test('a container handle method: E_INVALID_ARGUMENT naming the key, no engine call', async ({ sessionId }) => {
      const handle = createContainerHandle(sessionId, { image: TEST_IMAGE, socketPath: proxy.socketPath });
      for (const call of [
        () => handle.ready({ bogus: 1 } as never),
        () => handle.peek({ bogus: 1 } as never),
        () => handle.remove({ bogus: 1 } as never),
        () => handle.hostAddress(80, { bogus: 1 } as never),
      ]) {
        const { value: error, requests } = await proxy.during(() => expectBerthError(call(), InvalidArgumentError));
        expectUnknownKey(error, 'bogus');
        expect(requests).toEqual([]);
      }
      expect(handle.ownership).toBeNull();
    });
  });

  describe('reapOrphans({ dryrun: true })', () => {
    afterEach(killAllChildren);

    test('rejects and removes nothing: the orphan is still there, and a real run removes it', async ({ sessionId, labels }) => {
      const scope = { ...labels, 'berth.test-case': sessionId };
      const owner = await startChild();
      const created = await owner.call('createSession', { sessionId, image: TEST_IMAGE, labels: scope });
      await owner.kill('SIGKILL');
      const dry = await reapOrphans({ labels: scope, dryRun: true });
      expect(dry.removed.map((e) => [e.id, e.reason])).toEqual([[created.id, 'owner-dead']]);

      const error = await expectBerthError(reapOrphans({ labels: scope, dryrun: true } as never), InvalidArgumentError);
      expectUnknownKey(error, 'dryrun', 'dryRun');
      expect(error.message).toContain('did you mean `dryRun`');
      expect((await inspectContainer(created.id))?.Id).toBe(created.id);

      const real = await reapOrphans({ labels: scope });
      expect(real.removed.map((e) => [e.id, e.reason])).toEqual([[created.id, 'owner-dead']]);
      expect(await inspectContainer(created.id)).toBeNull();
    });
  });
});
