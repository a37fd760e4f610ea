// The engine under test (BERTH_TEST_ENGINE=docker|podman) as berth sees it: engineInfo, case 10
// (Podman answers a taken name with 500 and has its own state words; berth reports both
// engines alike), exec in a stopped container, and E_ENGINE_UNAVAILABLE / E_INVALID_ARGUMENT
// for engine selection from JavaScript.
import { describe, expect, it } from 'vitest';
import {
  createSession,
  EngineUnavailableError,
  engineInfo,
  InvalidArgumentError,
  peek,
  SessionExistsError,
} from '../../index.mjs';
import { engineAvailable } from '../helpers/engine-available.js';
import { sessionTest as test } from '../helpers/fixtures.js';
import { testEngineName, testSocketPath } from '../helpers/test-engine.mjs';
import { TEST_IMAGE } from '../helpers/test-image.mjs';
import { engineSuite } from '../helpers/suite.js';

/** The states `PeekResult.state` may take (docs/design.md#public-api). */
const PEEK_STATES = ['created', 'running', 'paused', 'restarting', 'exited', 'removing', 'dead', 'unknown'];

engineSuite(`engine under test (${testEngineName()})`, () => {

  it('engineInfo names the engine, its API version and endpoint', async () => {
    const info = await engineInfo({ socketPath: testSocketPath() });
    expect(info.kind).toBe(testEngineName());
    expect(info.endpoint).toBe(`unix://${testSocketPath()}`);
    const [major, minor] = info.apiVersion.split('.').map(Number);
    expect(major! > 1 || (major === 1 && minor! >= 41)).toBe(true);
    expect(info.version.length).toBeGreaterThan(0);
    expect(info.rootless).toBe(false);
    expect(info.remote).toBe(false);
  });

  test('case 10: a duplicate name is E_SESSION_EXISTS, naming the holder', async ({ engine, sessionId, labels, track }) => {
    const first = track(await createSession({ ...engine, sessionId, labels, image: TEST_IMAGE }));
    const error = await createSession({ ...engine, sessionId, labels, image: TEST_IMAGE }).catch((e: unknown) => e);
    expect(SessionExistsError.isInstance(error)).toBe(true);
    expect((error as SessionExistsError).details).toMatchObject({
      name: first.name,
      id: first.id,
      managed: true,
      sessionId,
      state: 'running',
    });
    expect((await first.exec(['true'])).exitCode).toBe(0);
  });

  test('case 10: a stopped container reports a state the API types accept, with the engine word', async ({ engine, sessionId, labels, track, session }) => {
    expect(await session.stop({ timeoutMs: 0 })).toEqual({ stopped: true });
    const seen = await peek(sessionId, engine);
    expect(seen).not.toBeNull();
    expect(PEEK_STATES).toContain(seen!.state);
    expect(seen!.state).toBe('exited');
    expect(['exited', 'stopped']).toContain(seen!.rawState);
  });

  test('exec in a stopped container is E_ENGINE 409 on either engine', async ({ engine, sessionId, labels, track, session }) => {
    await session.stop({ timeoutMs: 0 });
    const error = await session.exec(['true']).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'E_ENGINE', details: { operation: 'create exec', status: 409 } });
    expect((error as Error).message).toContain(session.name);
  });
});

describe('engine selection from JavaScript', () => {
  it('an absent socket is E_ENGINE_UNAVAILABLE saying what was tried', async () => {
    const error = await engineInfo({ socketPath: '/nonexistent/berth-test.sock' }).catch((e: unknown) => e);
    expect(EngineUnavailableError.isInstance(error)).toBe(true);
    expect((error as EngineUnavailableError).details).toMatchObject({
      tried: 'unix:///nonexistent/berth-test.sock from socketPath option',
      reason: 'socket /nonexistent/berth-test.sock does not exist',
    });
    expect((error as EngineUnavailableError).details.hint).toMatch(/start the engine/);
  });

  it('an unknown engine is E_INVALID_ARGUMENT listing the valid values', async () => {
    const error = await engineInfo({ engine: 'lxc' as never }).catch((e: unknown) => e);
    expect(InvalidArgumentError.isInstance(error)).toBe(true);
    expect((error as InvalidArgumentError).message).toContain('docker, podman');
    await expect(engineInfo({ engine: { freebsd: 'docker' } as never })).rejects.toMatchObject({
      code: 'E_INVALID_ARGUMENT',
      details: { field: 'engine.freebsd' },
    });
    await expect(engineInfo({ connectTimeoutMs: 0 })).rejects.toMatchObject({
      code: 'E_INVALID_ARGUMENT',
      details: { field: 'connectTimeoutMs' },
    });
  });

  it.skipIf(!engineAvailable())('a per-platform map without this platform falls through to discovery', async () => {
    const other = process.platform === 'darwin' ? { linux: 'docker' as const } : { darwin: 'podman' as const };
    const info = await engineInfo({ engine: other });
    expect(info.kind).toBe(testEngineName());
  });

  it.skipIf(!engineAvailable() || testEngineName() !== 'podman')("engine: 'podman' finds Podman through CONTAINER_HOST, not DOCKER_HOST", async () => {
    const saved = { docker: process.env.DOCKER_HOST, container: process.env.CONTAINER_HOST };
    process.env.DOCKER_HOST = 'unix:///var/run/docker.sock';
    process.env.CONTAINER_HOST = `unix://${testSocketPath()}`;
    try {
      const info = await engineInfo({ engine: { [process.platform]: 'podman' } as never });
      expect(info).toMatchObject({ kind: 'podman', endpoint: `unix://${testSocketPath()}` });
    } finally {
      process.env.DOCKER_HOST = saved.docker;
      if (saved.container === undefined) delete process.env.CONTAINER_HOST;
      else process.env.CONTAINER_HOST = saved.container;
    }
  });
});
