// @berth/core/container on the real engine: the old container.ts handle with berth's ownership.
// Every handle talks to the engine through a counting proxy (helpers/engine-proxy.mjs), so "no
// engine call" is counted, an acquisition is held in flight, and single calls are refused
// without stopping the shared engine.
import { afterAll, afterEach, beforeAll, expect } from 'vitest';
import { createContainerHandle, type ContainerError, type ContainerHandle, type ContainerHandleOptions } from '../../container.mjs';
import { containerName, SessionNotFoundError } from '../../index.mjs';
import { killAllChildren, startChild } from '../helpers/child.js';
import {
  createContainer,
  engineRequest,
  execIn,
  inspectContainer,
  pauseContainer,
  removeContainer,
  startContainer,
  stopContainer,
  unpauseContainer,
} from '../helpers/engine-http.mjs';
import { request, startEngineProxy } from '../helpers/engine-proxy.mjs';
import { rejectionOf } from '../helpers/expect-error.js';
import { sessionTest } from '../helpers/fixtures.js';
import { TEST_IMAGE } from '../helpers/test-image.mjs';
import { engineSuite } from '../helpers/suite.js';

type Proxy = Awaited<ReturnType<typeof startEngineProxy>>;
let proxy: Proxy;

/** `sessionTest` plus `handle()`: a drop-in handle through the proxy, removed (if it created) when the test ends. */
const test = sessionTest.extend<{ handle: (sandboxId: string, options?: Partial<ContainerHandleOptions>) => ContainerHandle }>({
  handle: async ({ labels }, use) => {
    const made: ContainerHandle[] = [];
    try {
      await use((sandboxId, options = {}) => {
        const h = createContainerHandle(sandboxId, { image: TEST_IMAGE, labels, ...options, socketPath: proxy.socketPath });
        made.push(h);
        return h;
      });
    } finally {
      for (const h of made) await h.remove().catch((error: unknown) => console.error(`[berth tests] ${h.name}:`, error));
    }
  },
});

const writes = (requests: { method: string }[]): { method: string }[] => requests.filter((r) => r.method !== 'GET' && r.method !== 'HEAD');

engineSuite('@berth/core/container', () => {
  beforeAll(async () => {
    proxy = await startEngineProxy();
  });
  afterEach(killAllChildren);
  afterAll(async () => {
    await proxy?.close();
  });

  test('ready() creates once (memoised), hostAddress and peek answer, remove() removes by id once', async ({ sessionId, handle }) => {
    const h = handle(sessionId, { ports: [8080], env: { SECRET_TOKEN: 'hunter2' }, workDir: '/tmp' });
    expect(h.name).toBe(containerName(sessionId, 'please'));
    expect([h.ownership, h.id]).toEqual([null, null]);

    const from = proxy.requests.length;
    const [a, b] = await Promise.all([h.ready(), h.ready()]);
    expect([a, b]).toEqual([h.name, h.name]);
    expect(h.ownership).toBe('created');
    const created = await inspectContainer(h.name);
    expect(created?.Id).toBe(h.id);
    expect(created?.Config.Env).toContain('SECRET_TOKEN=hunter2');
    // The sandbox's create (the network guard's helper container has no name: docs/network.md).
    expect(proxy.requests.slice(from).filter((r) => r.method === 'POST' && r.path.startsWith('/containers/create?name='))).toHaveLength(1);

    const again = await proxy.during(() => h.ready());
    expect(again).toEqual({ value: h.name, requests: [] });

    const address = await h.hostAddress(8080);
    expect(address).toMatch(/^127\.0\.0\.1:\d+$/);
    expect(created?.NetworkSettings.Ports['8080/tcp']?.[0]?.HostPort).toBe(address.split(':')[1]);
    await expect(h.peek()).resolves.toBe(h.name);

    const removal = await proxy.during(() => h.remove());
    expect(removal.value).toEqual({ removed: true });
    expect(removal.requests.filter((r) => r.method === 'DELETE' && r.path.startsWith('/containers/'))).toEqual([
      expect.objectContaining({ path: expect.stringMatching(new RegExp(`^/containers/${created?.Id}\\?`)) }),
    ]);
    expect(await inspectContainer(created!.Id)).toBeNull();
    await expect(proxy.during(() => h.remove())).resolves.toEqual({
      value: { removed: false, reason: 'already-removed' },
      requests: [],
    });
    expect([h.ownership, h.id]).toEqual([null, null]);
  });

  test("an adopted handle's remove() issues nothing and the other process's container lives", async ({ sessionId, labels, handle }) => {
    const other = await startChild();
    const theirs = await other.call('containerHandle', sessionId, { image: TEST_IMAGE, labels });
    expect(theirs).toMatchObject({ name: containerName(sessionId, 'please'), ownership: 'created' });

    const h = handle(sessionId);
    await expect(h.ready()).resolves.toBe(theirs.name);
    expect([h.ownership, h.id]).toEqual(['adopted', theirs.id]);
    const removal = await proxy.during(() => h.remove());
    expect(removal).toEqual({ value: { removed: false, reason: 'not-owner' }, requests: [] });
    await expect(proxy.during(() => h.remove())).resolves.toEqual({ value: { removed: false, reason: 'not-owner' }, requests: [] });

    expect((await inspectContainer(theirs.id))?.State.Running).toBe(true);
    expect((await execIn(theirs.id, ['echo', 'alive'])).stdout).toBe('alive\n');
    await expect(other.call('containerRemove', theirs.handle)).resolves.toEqual({ removed: true });
    expect(await inspectContainer(theirs.id)).toBeNull();
  });

  test('a handle that never acquired a container issues nothing on remove()', async ({ sessionId, handle }) => {
    const h = handle(sessionId);
    await expect(proxy.during(() => h.remove())).resolves.toEqual({ value: { removed: false, reason: 'not-acquired' }, requests: [] });
    await expect(proxy.during(() => Promise.all([h.remove(), h.remove()]))).resolves.toEqual({
      value: [
        { removed: false, reason: 'not-acquired' },
        { removed: false, reason: 'not-acquired' },
      ],
      requests: [],
    });
    expect(await inspectContainer(h.name)).toBeNull();
  });

  test('remove() during an acquisition in flight waits for it, then removes what it created', async ({ sessionId, handle }) => {
    const h = handle(sessionId);
    const from = proxy.requests.length;
    const held = proxy.hold(request('POST', /^\/containers\/create\?/));
    const ready = h.ready();
    // The id as the acquisition set it (removal clears it only after its engine calls).
    const createdId = ready.then(() => h.id);
    await held.arrived;
    let removeSettled = false;
    const removal = h.remove().finally(() => (removeSettled = true));
    // The create has not been answered, so remove() cannot have issued anything yet.
    const create = proxy.requests.slice(from).find((r) => r.method === 'POST' && r.path.startsWith('/containers/create?'))!;
    expect(create).toMatchObject({ method: 'POST', answeredSeq: null });
    expect(removeSettled).toBe(false);
    held.release();

    await expect(ready).resolves.toBe(h.name);
    await expect(removal).resolves.toEqual({ removed: true });
    const id = await createdId;
    expect(id).toMatch(/^[0-9a-f]{64}$/);
    // The sandbox's removal (the network guard's helper container is removed by its own id).
    const deletes = proxy.requests.slice(from).filter((r) => r.method === 'DELETE' && r.path.startsWith(`/containers/${id}?`));
    expect(deletes).toHaveLength(1);
    const removed = deletes[0]!;
    // Every call of the acquisition was answered before the removal's first call arrived.
    expect(create.answeredSeq).not.toBeNull();
    const before = proxy.requests.filter((r) => r.seq >= create.seq && r.seq < removed.seq);
    for (const r of before) expect(r.answeredSeq, `${r.method} ${r.path}`).toBeLessThan(removed.seq);
    expect(await inspectContainer(h.name)).toBeNull();
  });

  test('remove() called right after ready(), in the same tick, still waits and removes', async ({ sessionId, handle }) => {
    const h = handle(sessionId);
    const ready = h.ready();
    const removal = h.remove();
    await expect(ready).resolves.toBe(h.name);
    await expect(removal).resolves.toEqual({ removed: true });
    expect(await inspectContainer(h.name)).toBeNull();
  });

  test('a failed acquisition is not memoised: the next ready() acquires', async ({ sessionId, handle }) => {
    const h = handle(sessionId, { env: { API_KEY: 'sk-do-not-log' }, ports: [80] });
    proxy.fail(request('POST', /^\/containers\/create\?/), { status: 500 });
    const error = (await rejectionOf(h.ready())) as ContainerError;
    expect(error).toMatchObject({ code: 'E_ENGINE', exitCode: null, details: { status: 500 } });
    expect(error.args).toEqual(['run', '-d', '--name', h.name, '--init', '-p', '127.0.0.1::80', '-e', 'API_KEY=<redacted>', TEST_IMAGE, 'sleep', 'infinity']);
    expect(error.stderr).toEqual(expect.any(String));
    expect(JSON.stringify({ ...error, message: error.message })).not.toContain('sk-do-not-log');
    expect(h.ownership).toBeNull();
    expect(await inspectContainer(h.name)).toBeNull();

    await expect(h.ready()).resolves.toBe(h.name);
    expect(h.ownership).toBe('created');
    expect((await inspectContainer(h.name))?.State.Running).toBe(true);
  });

  test('a failed remove() keeps the duty: the retry removes', async ({ sessionId, handle }) => {
    const h = handle(sessionId);
    await h.ready();
    const id = h.id!;
    proxy.fail(request('DELETE', new RegExp(`^/containers/${id}\\?`)), { status: 500 });
    const error = (await rejectionOf(h.remove())) as ContainerError;
    expect(error).toMatchObject({ code: 'E_ENGINE', exitCode: null, args: ['rm', '-f', id] });
    expect(proxy.requests.filter((r) => r.method === 'DELETE' && r.injected && r.path.includes(id))).toHaveLength(1);
    expect((await inspectContainer(id))?.State.Running).toBe(true);
    expect([h.ownership, h.id]).toEqual(['created', id]);

    await expect(h.remove()).resolves.toEqual({ removed: true });
    expect(await inspectContainer(id)).toBeNull();
  });

  test('peek() names only a running container and never creates, starts or unpauses', async ({ sessionId, handle, handMade }) => {
    const h = handle(sessionId);
    const absent = await proxy.during(() => h.peek());
    expect(absent.value).toBeUndefined();
    expect(writes(absent.requests)).toEqual([]);

    const id = await handMade(h.name, { start: false });
    const created = await proxy.during(() => h.peek());
    expect(created.value).toBeUndefined();
    expect(writes(created.requests)).toEqual([]);
    expect((await inspectContainer(id))?.State.Status).toBe('created');

    await startContainer(id);
    await expect(h.peek()).resolves.toBe(h.name);
    await pauseContainer(id);
    const paused = await proxy.during(() => h.peek());
    expect(paused.value).toBeUndefined();
    expect(writes(paused.requests)).toEqual([]);
    expect((await inspectContainer(id))?.State.Paused).toBe(true);
    await unpauseContainer(id);
    await stopContainer(id);
    const stopped = await proxy.during(() => h.peek());
    expect(stopped.value).toBeUndefined();
    expect(writes(stopped.requests)).toEqual([]);
    expect((await inspectContainer(id))?.State.Running).toBe(false);
  });

  test('an unlabelled container of the requested image is adopted (and started); its remove() issues nothing', async ({
    sessionId,
    handle,
    handMade,
  }) => {
    const name = containerName(sessionId, 'please');
    const id = await handMade(name, { start: false });
    const h = handle(sessionId);
    await expect(h.ready()).resolves.toBe(name);
    expect([h.ownership, h.id]).toEqual(['adopted', id]);
    expect((await inspectContainer(id))?.State.Running).toBe(true);
    await expect(h.peek()).resolves.toBe(name);

    await expect(proxy.during(() => h.remove())).resolves.toEqual({ value: { removed: false, reason: 'not-owner' }, requests: [] });
    expect((await inspectContainer(id))?.State.Running).toBe(true);
  });

  test('an unlabelled container of another image is refused and left alone', async ({ sessionId, handle, handMade, labels }) => {
    // Another image: the test image committed from a container (a new image id, on both engines).
    const seed = await handMade(`${sessionId}-seed`, { start: false });
    const committed = await engineRequest('POST', `/commit?container=${seed}`, { body: {} });
    expect(committed.status, committed.text).toBe(201);
    const otherImage: string = committed.body.Id;
    const name = containerName(sessionId, 'please');
    const id = await createContainer(name, { Image: otherImage, Cmd: ['sleep', '2147483647'], Labels: labels });
    try {
      const h = handle(sessionId);
      const attempt = await proxy.during(() => rejectionOf(h.ready()));
      const error = attempt.value as ContainerError;
      expect(error).toMatchObject({ code: 'E_FOREIGN_CONTAINER', exitCode: null, args: ['start', name], details: { id, name } });
      expect(attempt.requests.filter((r) => r.method === 'POST' && /\/(start|unpause|stop|kill)$/.test(r.path))).toEqual([]);
      expect(attempt.requests.filter((r) => r.method === 'DELETE')).toEqual([]);
      expect((await inspectContainer(id))?.State.Status).toBe('created');
      expect(h.ownership).toBeNull();
      await expect(proxy.during(() => h.remove())).resolves.toEqual({ value: { removed: false, reason: 'not-acquired' }, requests: [] });
    } finally {
      await removeContainer(id);
      await engineRequest('DELETE', `/images/${otherImage}`);
    }
  });

  test('hostAddress() acquires first, as the old module (await ready()); the per-handle rule holds in one process', async ({
    sessionId,
    handle,
  }) => {
    const owner = handle(sessionId, { ports: [8080] });
    // No ready() before: hostAddress creates the container itself.
    const address = await owner.hostAddress(8080);
    expect(address).toMatch(/^127\.0\.0\.1:\d+$/);
    expect(owner.ownership).toBe('created');
    const reader = handle(sessionId, { ports: [8080] });
    await expect(reader.hostAddress(8080)).resolves.toBe(address);
    // Same process, another handle: the drop-in keeps the old module's rule (only what this
    // handle created), unlike the root API where the process's duty is shared.
    expect(reader.ownership).toBe('adopted');
    await expect(reader.remove()).resolves.toEqual({ removed: false, reason: 'not-owner' });
    await expect(owner.remove()).resolves.toEqual({ removed: true });
    const error = (await rejectionOf(reader.hostAddress(8080))) as ContainerError;
    expect(SessionNotFoundError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ exitCode: null, args: ['port', owner.name, '8080/tcp'] });
  });

  test('bad input is E_INVALID_ARGUMENT before any engine call', async ({ handle }) => {
    expect(() => createContainerHandle(42 as unknown as string, { image: TEST_IMAGE })).toThrow(
      expect.objectContaining({ code: 'E_INVALID_ARGUMENT', exitCode: null, args: [] }),
    );
    expect(() => createContainerHandle('x', { image: TEST_IMAGE, ports: [0] })).toThrow(expect.objectContaining({ code: 'E_INVALID_ARGUMENT' }));
    for (const [sandboxId, options] of [
      ['', {}],
      ['a\u0000b', {}],
      ['ok', { image: 'UPPER:1' }],
      ['ok', { env: { 'A=B': 'v' } }],
    ] as const) {
      const h = handle(sandboxId, options);
      const attempt = await proxy.during(() => rejectionOf(h.ready()));
      expect(attempt.value).toMatchObject({ code: 'E_INVALID_ARGUMENT', exitCode: null });
      expect(attempt.requests).toEqual([]);
    }
  });
});
