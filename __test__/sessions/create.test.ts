// createSession on the real engine: setup commands in order, env/user/workDir applied, ports on
// 127.0.0.1 only, an init as PID 1, and failures that leave nothing behind.
import { expect } from 'vitest';
import { containerName, createSession, ImageNotFoundError, peek, SetupFailedError } from '../../index.mjs';
import { inspectContainer } from '../helpers/engine-http.mjs';
import { expectBerthError } from '../helpers/expect-error.js';
import { sessionTest as test } from '../helpers/fixtures.js';
import { listRunContainers } from '../helpers/leak-check.mjs';
import { TEST_IMAGE } from '../helpers/test-image.mjs';
import { engineSuite } from '../helpers/suite.js';

/** Asserts no container (in any state) carries the session's derived name. */
async function expectNoContainer(sessionId: string): Promise<void> {
  expect(await inspectContainer(containerName(sessionId))).toBeNull();
  expect(await peek(sessionId)).toBeNull();
}

engineSuite('createSession', () => {

  test('returns a created handle on a running, ready, labelled container', async ({ sessionId, labels, track, session }) => {
    expect(session).toMatchObject({ sessionId, name: containerName(sessionId), ownership: 'created', drift: [] });
    expect(session.id).toMatch(/^[0-9a-f]{64}$/);
    expect(session.owner).toMatchObject({ pid: process.pid, liveness: 'alive' });
    const c = await inspectContainer(session.id);
    expect(c?.Name).toBe(`/${session.name}`);
    expect(c?.State.Running).toBe(true);
    expect(c?.Config.Labels).toMatchObject({
      ...labels,
      'dev.berth.managed': 'true',
      'dev.berth.session-id': sessionId,
      'dev.berth.prefix': 'berth',
      'dev.berth.owner.pid': String(process.pid),
    });
    expect(await peek(sessionId)).toMatchObject({ ready: true });
  });

  test('runs setup commands in order: a string under sh -c, an array as argv', async ({ sessionId, labels, track }) => {
    const session = track(
      await createSession({
        sessionId,
        image: TEST_IMAGE,
        labels,
        setupCommands: [
          'echo "one $((40 + 2))" > /tmp/order',
          ['sh', '-c', 'echo two >> /tmp/order'],
          // argv form, no shell: the target is a file literally named `$HOME`, a snapshot between two and four.
          ['cp', '/tmp/order', '/tmp/$HOME'],
          'echo four >> /tmp/order',
        ],
      }),
    );
    expect((await session.exec(['cat', '/tmp/order'])).stdout.toString()).toBe('one 42\ntwo\nfour\n');
    expect((await session.exec(['cat', '/tmp/$HOME'])).stdout.toString()).toBe('one 42\ntwo\n');
  });

  test('applies env, user and workDir to the container, its setup and its execs', async ({ sessionId, labels, track }) => {
    const session = track(
      await createSession({
        sessionId,
        image: TEST_IMAGE,
        labels,
        env: { GREETING: 'hello world', QUOTED: `it's "quoted" $HOME`, EMPTY: '' },
        user: '65534:65534',
        workDir: '/tmp',
        setupCommands: ['id -u > setup-id; pwd >> setup-id; echo "$GREETING" >> setup-id'],
      }),
    );
    expect((await session.exec(['cat', '/tmp/setup-id'])).stdout.toString()).toBe('65534\n/tmp\nhello world\n');
    const out = await session.exec(['sh', '-c', 'id -u; id -g; pwd; echo "$GREETING"; echo "$QUOTED"; echo "${EMPTY-unset}|"']);
    expect(out.stdout.toString()).toBe(`65534\n65534\n/tmp\nhello world\nit's "quoted" $HOME\n|\n`);
    const c = await inspectContainer(session.id);
    expect(c?.Config).toMatchObject({ User: '65534:65534', WorkingDir: '/tmp' });
    expect(await session.workingDirectory()).toBe('/tmp');
    // No env value ends up in a label.
    expect(Object.values(c?.Config.Labels ?? {}).some((v) => String(v).includes('hello world'))).toBe(false);
  });

  test('publishes ports on 127.0.0.1 only', async ({ sessionId, labels, track }) => {
    const session = track(await createSession({ sessionId, image: TEST_IMAGE, labels, ports: [8080, 9090] }));
    const c = await inspectContainer(session.id);
    const bindings = c?.HostConfig.PortBindings as Record<string, { HostIp: string; HostPort: string }[]>;
    expect(Object.keys(bindings).sort()).toEqual(['8080/tcp', '9090/tcp']);
    for (const list of Object.values(bindings)) expect(list.map((b) => b.HostIp)).toEqual(['127.0.0.1']);
    const published = c?.NetworkSettings.Ports as Record<string, { HostIp: string; HostPort: string }[]>;
    for (const port of [8080, 9090]) {
      const [binding, ...more] = published[`${port}/tcp`]!;
      expect(more).toEqual([]);
      expect(binding!.HostIp).toBe('127.0.0.1');
      expect(await session.hostAddress(port)).toBe(`127.0.0.1:${binding!.HostPort}`);
    }
  });

  test('runs an init process as PID 1 (the sleep keep-alive is its child)', async ({ sessionId, labels, track, session }) => {
    expect((await inspectContainer(session.id))?.HostConfig.Init).toBe(true);
    const ps = (await session.exec(['ps', '-o', 'pid,ppid,comm'])).stdout.toString().trim().split('\n').slice(1);
    const rows = ps.map((line) => line.trim().split(/\s+/));
    const init = rows.find(([pid]) => pid === '1');
    expect(init?.[2]).toMatch(/init/);
    const sleep = rows.find(([, , comm]) => comm === 'sleep');
    expect(sleep?.[1]).toBe('1');
  });

  test('a failing setup command: E_SETUP_FAILED with its exit code and output, and the container is gone', async ({
    sessionId,
    labels,
  }) => {
    const error = await expectBerthError(
      createSession({
        sessionId,
        image: TEST_IMAGE,
        labels,
        setupCommands: ['true', 'echo out; echo err >&2; exit 3', 'touch /tmp/never'],
      }),
      SetupFailedError,
    );
    expect(error.details).toMatchObject({
      sessionId,
      name: containerName(sessionId),
      index: 1,
      exitCode: 3,
      argv: ['sh', '-c', 'echo out; echo err >&2; exit 3'],
      stdout: 'out\n',
      stderr: 'err\n',
    });
    expect(error.cause).toBeUndefined();
    await expectNoContainer(sessionId);
  });

  test('a user the image lacks: rejects with a code and leaves no container, not even in state created', async ({
    sessionId,
    labels,
  }) => {
    // Ready means running: a start the engine refuses is a failed setup, with the engine's reason.
    const error = await expectBerthError(
      createSession({ sessionId, image: TEST_IMAGE, labels, user: 'no-such-user' }),
      SetupFailedError,
    );
    expect(error.details).toMatchObject({ stage: 'start', reason: expect.any(String) });
    expect(error.cause).toBeUndefined();
    await expectNoContainer(sessionId);
    expect((await listRunContainers()).filter((c) => c.state === 'created')).toEqual([]);
  });

  test.for([
    ['a registry that refuses connections', '127.0.0.1:1/berth-test/missing:1'],
    ['Docker Hub, unreachable here', 'berth-test/not-on-any-registry:1'],
  ] as const)('an image that cannot be pulled from %s: E_IMAGE_NOT_FOUND, nothing created', async ([, image], { sessionId, labels }) => {
    const error = await expectBerthError(createSession({ sessionId, image, labels }), ImageNotFoundError);
    expect(error.details).toMatchObject({ image, reason: expect.any(String) });
    await expectNoContainer(sessionId);
  });

  test('a session id with any characters maps to its derived name and round-trips in the labels', async ({ labels, track }) => {
    const sessionId = `${labels['berth.test-run']} ünïcode/😀 "quoted"`;
    const session = track(await createSession({ sessionId, image: TEST_IMAGE, labels }));
    expect(session.name).toBe(containerName(sessionId));
    expect(session.sessionId).toBe(sessionId);
    expect(await peek(sessionId)).toMatchObject({ id: session.id, sessionId });
  });
});
