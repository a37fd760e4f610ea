// Oversized and wrongly typed input to a live session (root API and harness) is E_INVALID_ARGUMENT
// before the engine sees it: a working directory, program name or user the runtime would echo
// into an error over 64 KiB (which wedges `runc exec` and then the container), an engine exec
// over its size limit, and every method of `Session` and of the harness session called with
// arguments of the wrong type. Each refused command would have created a marker file: after the
// file's tests the marker is absent and the session still runs commands.
import { afterAll, beforeAll, describe, expect } from 'vitest';
import { BerthSandboxSession, createDockerSandboxProvider } from '../../harness.mjs';
import { containerName, createSession, InvalidArgumentError, type Session } from '../../index.mjs';
import { expectBerthError } from '../helpers/expect-error.js';
import { listRunContainers } from '../helpers/leak-check.mjs';
import { sessionTest as test } from '../helpers/fixtures.js';
import { testLabels, testSessionId } from '../helpers/run-label.mjs';
import { testEngine } from '../helpers/test-engine.mjs';
import { TEST_IMAGE } from '../helpers/test-image.mjs';
import { engineSuite } from '../helpers/suite.js';

/** The most an engine exec carries (argv, env, cwd and user), in bytes: the core's limit. */
const ENGINE_EXEC_LIMIT = 1024 * 1024;
const MARKER = '/tmp/must-not-run';
const TOUCH = `touch ${MARKER}`;
/** A hang here is the bug: a refusal is immediate, so a generous bound only detects hangs. */
const HANG_MS = 30_000;

/** Runs `fn` with every command of this process on the engine path (no command channel). */
async function withoutChannel<T>(fn: () => Promise<T>): Promise<T> {
  process.env.BERTH_COMMAND_CHANNEL = '0';
  try {
    return await fn();
  } finally {
    delete process.env.BERTH_COMMAND_CHANNEL;
  }
}

/** `call` must reject with E_INVALID_ARGUMENT naming `field` (a string or a pattern) and `reason`. */
async function expectInvalid(call: () => PromiseLike<unknown>, field: string | RegExp, reason?: RegExp): Promise<void> {
  const promise = Promise.resolve().then(call);
  const error = await expectBerthError(promise, InvalidArgumentError);
  if (typeof field === 'string') expect(error.details.field).toBe(field);
  else expect(error.details.field).toMatch(field);
  if (reason) expect(error.details.reason).toMatch(reason);
}

engineSuite('bad input never reaches the engine', () => {
  let session: Session;
  let harness: BerthSandboxSession;
  beforeAll(async () => {
    const engine = testEngine();
    session = await createSession({ ...engine, sessionId: testSessionId('inputs'), image: TEST_IMAGE, labels: testLabels() });
    const provider = createDockerSandboxProvider({ ...engine, image: TEST_IMAGE, labels: testLabels() });
    const created = await provider.createSession({ sessionId: testSessionId('inputs-h') });
    if (!(created instanceof BerthSandboxSession)) throw new Error('expected a BerthSandboxSession');
    harness = created;
  });
  afterAll(async () => {
    try {
      // Nothing refused ran, and both sandboxes still answer.
      expect((await session.exec(['test', '-e', MARKER])).exitCode).toBe(1);
      expect((await harness.run({ command: `test -e ${MARKER}` })).exitCode).toBe(1);
    } finally {
      await harness?.destroy();
      await session?.remove();
    }
  });

  describe('what runc would echo into an error is bounded on every path', () => {
    const long = 'x'.repeat(300_000);
    test('a harness workingDirectory of 300,000 characters (relative: it resolves to an absolute path)', { timeout: HANG_MS }, async () => {
      await expectInvalid(() => harness.run({ command: TOUCH, workingDirectory: long }), 'cwd', /over the limit of 4095 bytes/);
      await expectInvalid(() => harness.spawn({ command: TOUCH, workingDirectory: long }), 'cwd', /4095/);
      await withoutChannel(() => expectInvalid(() => harness.run({ command: TOUCH, workingDirectory: long }), 'cwd'));
      // The sandbox is not wedged.
      expect((await harness.run({ command: 'echo ok' })).stdout).toBe('ok\n');
    });

    test('a cwd, program name or user past Linux limits, through exec and spawn, with and without the channel', { timeout: HANG_MS }, async () => {
      for (const channel of [true, false]) {
        const run = (fn: () => Promise<void>): Promise<void> => (channel ? fn() : withoutChannel(fn));
        await run(async () => {
          await expectInvalid(() => session.exec(['touch', MARKER], { cwd: `/${long}` }), 'cwd', /300001 bytes, over the limit of 4095 bytes \(PATH_MAX\)/);
          await expectInvalid(() => session.exec(['touch', MARKER], { cwd: `/tmp/${'n'.repeat(256)}` }), 'cwd', /NAME_MAX/);
          await expectInvalid(() => session.spawn(['touch', MARKER], { cwd: `/${long}` }), 'cwd');
          await expectInvalid(() => session.exec([`/${'p'.repeat(4095)}`, MARKER]), 'argv[0]', /over the limit of 4095 bytes/);
          await expectInvalid(() => session.execText([long]), 'argv[0]');
          await expectInvalid(() => session.exec(['touch', MARKER], { user: long }), 'user', /over the limit of 256 bytes/);
        });
      }
      // At the limits, the runtime's own answer comes back (a short error, no hang).
      const atLimit = await withoutChannel(() =>
        session.exec(['true'], { cwd: `/${'d/'.repeat(2047)}` }).then((r) => r.exitCode, (e: { code: string }) => e.code),
      );
      expect(atLimit).not.toBe(0);
    });
  });

  describe('an engine exec is bounded by what it carries', () => {
    // Nine values of 100 KiB: each under the kernel's 128 KiB per string, 900 KiB in all.
    const env = (n: number): Record<string, string> =>
      Object.fromEntries(Array.from({ length: n }, (_, i) => [`V${i}`, 'y'.repeat(100 * 1024)]));
    const count = ['sh', '-c', `${TOUCH}.$0; env | grep -c '^V[0-9]*=yyy'`, 'x'];

    test('under the limit it runs; over it, it is refused naming the limit', { timeout: HANG_MS }, async () => {
      const ran = await withoutChannel(() => session.execText(count, { env: env(9) }));
      expect(ran).toMatchObject({ exitCode: 0, stdout: '9\n' });
      await withoutChannel(() =>
        expectInvalid(() => session.exec(['sh', '-c', TOUCH], { env: env(11) }), 'argv', new RegExp(`over the limit of ${ENGINE_EXEC_LIMIT} bytes`)),
      );
      await withoutChannel(() => expectInvalid(() => session.spawn(['sh', '-c', TOUCH, ...Array(11).fill('z'.repeat(100 * 1024))]), 'argv'));
      await withoutChannel(() => expectInvalid(() => harness.run({ command: TOUCH, env: env(11) }), 'argv'));
      // The command channel keeps its own, larger limit: the same 1.1 MiB runs there.
      const channel = await session.execText(count, { env: env(11) });
      expect(channel).toMatchObject({ exitCode: 0, stdout: '11\n' });
      await session.exec(['rm', '-f', `${MARKER}.x`]);
    });
  });

  test('a create with an oversized environment or labels, or a provider create with options of the wrong type, makes nothing', async () => {
    const engine = testEngine();
    const before = (await listRunContainers()).length;
    const base = { ...engine, sessionId: testSessionId('inputs-big'), image: TEST_IMAGE, labels: testLabels() };
    // One variable over Linux's MAX_ARG_STRLEN (128 KiB with `KEY=` and NUL): the entrypoint could not start.
    await expectInvalid(() => createSession({ ...base, env: { BIG: 'v'.repeat(128 * 1024) } }), 'env["BIG"]', /over the limit of 131072 bytes/);
    // Nine variables of 120 KiB: each fits, the environment does not (1 MiB).
    const many = Object.fromEntries(Array.from({ length: 9 }, (_, i) => [`V${i}`, 'v'.repeat(120 * 1024)]));
    await expectInvalid(() => createSession({ ...base, env: many }), 'env', /over the limit of 1048576 bytes/);
    await expectInvalid(() => createSession({ ...base, labels: { ...testLabels(), big: 'x'.repeat(64 * 1024) } }), 'labels', /over the limit of 65536 bytes/);
    const provider = createDockerSandboxProvider({ ...engine, image: TEST_IMAGE, labels: testLabels(), env: { BIG: 'v'.repeat(200 * 1024) } });
    await expectInvalid(() => provider.createSession({ sessionId: testSessionId('inputs-big-h') }), 'env["BIG"]');
    const fine = createDockerSandboxProvider({ ...engine, image: TEST_IMAGE, labels: testLabels() });
    const id = testSessionId('inputs-types-h');
    await expectInvalid(() => fine.createSession({ sessionId: id, onFirstCreate: 'x' } as never), 'onFirstCreate', /expected a function, got string/);
    await expectInvalid(() => fine.createSession({ sessionId: 42 } as never), 'sessionId');
    await expectInvalid(() => fine.createSession({ sessionId: id, abortSignal: {} } as never), 'abortSignal');
    await expectInvalid(() => fine.createSession({ sessionId: id, identity: 7, onFirstCreate: async () => {} } as never), 'identity');
    await expectInvalid(() => fine.createSession(42 as never), 'options');
    expect((await listRunContainers()).length).toBe(before);
  });

  describe('wrong types are E_INVALID_ARGUMENT, never a TypeError', () => {
    const wrong = [undefined, null, 42, 'string', {}, [], Symbol('s'), () => 1] as const;
    const name = (v: unknown): string => (typeof v === 'symbol' ? 'a symbol' : typeof v === 'function' ? 'a function' : JSON.stringify(v) ?? 'undefined');
    const noStream = [42, null, {}, 'string', undefined];

    test('Session.writeFileStream with a source that is not a stream or an iterable of bytes', async () => {
      for (const source of noStream) {
        await expectInvalid(() => session.writeFileStream(MARKER, source as never), 'source', /ReadableStream/);
      }
      await expectInvalid(() => session.writeFileStream(MARKER, [42] as never), 'source', /Uint8Array, got number/);
      expect(await session.readFile(MARKER)).toBeNull();
    });

    test.for([
      ['readFile', (v: unknown) => harness.readFile(v as never), 'options'],
      ['readBinaryFile', (v: unknown) => harness.readBinaryFile(v as never), 'options'],
      ['readTextFile', (v: unknown) => harness.readTextFile(v as never), 'options'],
      ['writeFile', (v: unknown) => harness.writeFile(v as never), 'options'],
      ['writeBinaryFile', (v: unknown) => harness.writeBinaryFile(v as never), 'options'],
      ['writeTextFile', (v: unknown) => harness.writeTextFile(v as never), 'options'],
      ['run', (v: unknown) => harness.run(v as never), 'options'],
      ['spawn', (v: unknown) => harness.spawn(v as never), 'options'],
      ['getPortEndpoint', (v: unknown) => harness.getPortEndpoint(v as never), 'options'],
      ['setNetworkPolicy', (v: unknown) => harness.setNetworkPolicy(v as never), 'policy'],
    ] as const)('harness %s with no options object', async ([, call, field]) => {
      for (const v of [undefined, null, 42, 'string']) await expectInvalid(() => call(v), field);
    });

    test('harness option fields of the wrong type', async () => {
      for (const path of [undefined, 42, null, {}]) {
        await expectInvalid(() => harness.readTextFile({ path } as never), 'path');
        await expectInvalid(() => harness.readFile({ path } as never), 'path');
        await expectInvalid(() => harness.writeTextFile({ path, content: 'x' } as never), 'path');
        await expectInvalid(() => harness.writeBinaryFile({ path, content: new Uint8Array(1) } as never), 'path');
      }
      for (const content of [42, null, undefined, {}]) {
        await expectInvalid(() => harness.writeTextFile({ path: MARKER, content } as never), 'content');
        await expectInvalid(() => harness.writeBinaryFile({ path: MARKER, content } as never), 'content');
      }
      for (const content of [42, null, {}, 'string']) {
        await expectInvalid(() => harness.writeFile({ path: MARKER, content } as never), 'content');
      }
      await expectInvalid(() => harness.readTextFile({ path: MARKER, encoding: 42 } as never), 'encoding');
      await expectInvalid(() => harness.writeTextFile({ path: MARKER, content: 'x', encoding: 42 } as never), 'encoding');
      await expectInvalid(() => harness.readFile({ path: MARKER, abortSignal: { aborted: false } } as never), 'abortSignal');
      await expectInvalid(() => harness.run({ command: TOUCH, abortSignal: 42 } as never), 'abortSignal');
      await expectInvalid(() => harness.getPortEndpoint({ port: 'x' } as never), 'port');
      await expectInvalid(() => harness.getPortEndpoint({ port: 8080, protocol: 'ftp' } as never), 'protocol');
      await expectInvalid(() => harness.setNetworkPolicy({ mode: 42 } as never), 'mode');
      expect(await session.readFile(MARKER)).toBeNull();
    });

    // Every public method of Session with a wrong first argument (where it takes one).
    const sessionCalls: [string, (v: unknown) => Promise<unknown>, RegExp][] = [
      ['exec', (v) => session.exec(v as never), /^argv/],
      ['execText', (v) => session.execText(v as never), /^argv/],
      ['spawn', (v) => session.spawn(v as never), /^argv/],
      ['exec options', (v) => session.exec(['touch', MARKER], v as never), /^options$|^\w+$/],
      ['readFile', (v) => session.readFile(v as never), /^path$/],
      ['openFile', (v) => session.openFile(v as never), /^path$/],
      ['writeFile', (v) => session.writeFile(v as never, 'x'), /^path$/],
      ['writeFile data', (v) => session.writeFile(MARKER, v as never), /^data$/],
      ['writeFileStream', (v) => session.writeFileStream(v as never, [new Uint8Array(1)]), /^path$/],
      ['setTimeout', (v) => session.setTimeout(v as never), /^\w+$/],
      ['hostAddress', (v) => session.hostAddress(v as never), /^port$/],
      ['setNetworkPolicy', (v) => session.setNetworkPolicy(v as never), /^policy$|^mode$/],
      ['commitTemplate', (v) => session.commitTemplate(v as never), /^key$/],
    ];
    test.for(sessionCalls)('Session.%s with each wrong type', async ([label, call, field]) => {
      for (const v of wrong) {
        // undefined options and an empty object are valid options.
        if (label === 'exec options' && (v === undefined || (typeof v === 'object' && v !== null && !Array.isArray(v)))) continue;
        // A string is data; a string or an array is an argv form the argv field names.
        if (label === 'writeFile data' && v === 'string') continue;
        if (label === 'commitTemplate' && v === 'string') continue; // a valid template key
        if (label === 'setTimeout' && typeof v === 'number') continue; // a valid timeout (42 ms)
        await expectInvalid(() => call(v), field).catch((error: Error) => {
          throw new Error(`${label}(${name(v)}): ${error.message}`);
        });
      }
      expect(await session.readFile(MARKER)).toBeNull();
    });

    test('Session.stop, remove, release and workingDirectory with options of the wrong type', async ({ engine, sessionId, labels, track }) => {
      // Its own session: a call that wrongly accepted its options would stop or remove it.
      const own = track(await createSession({ ...engine, sessionId, image: TEST_IMAGE, labels }));
      for (const v of wrong.filter((w) => w !== undefined && !(typeof w === 'object' && w !== null && !Array.isArray(w)))) {
        await expectInvalid(() => own.stop(v as never), /^options$/);
        await expectInvalid(() => own.remove(v as never), /^options$/);
        await expectInvalid(() => own.release(v as never), /^options$/);
        await expectInvalid(() => own.workingDirectory(v as never), /^options$/);
      }
      expect((await own.exec(['true'])).exitCode).toBe(0);
    });

    test("containerName('') names the empty id (the naming vectors fix it); createSession refuses it", async () => {
      expect(containerName('')).toMatch(/^berth--[0-9a-f]{8}$/);
      await expect(createSession({ sessionId: '', image: 'x' })).rejects.toMatchObject({ code: 'E_INVALID_ARGUMENT' });
    });
  });
});
