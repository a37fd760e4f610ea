// Session.setNetworkPolicy on the real engine: 'deny-all' detaches the container from every
// network, 'allow-all' attaches it to the one it was created on; only an owning handle may
// switch it. Reachability is checked for real: an HTTP server on the host, fetched from inside
// the container through its network's gateway.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect } from 'vitest';
import { createDockerSandboxProvider } from '../harness.mjs';
import { createSession, resumeSession, type Session } from '../index.mjs';
import { startChild } from './helpers/child.js';
import { engineAvailable } from './helpers/engine-available.js';
import { inspectContainer } from './helpers/engine-http.mjs';
import { sessionTest as test } from './helpers/fixtures.js';
import { expectNoLeaks } from './helpers/leak-check.mjs';
import { testLabels } from './helpers/run-label.mjs';
import { TEST_IMAGE } from './helpers/test-image.mjs';

/** The names of the networks the container is attached to, from inspect. */
async function networksOf(id: string): Promise<string[]> {
  return Object.keys((await inspectContainer(id))?.NetworkSettings?.Networks ?? {}).sort();
}

describe.skipIf(!engineAvailable())('network policy', () => {
  let server: http.Server;
  let port = 0;

  beforeAll(async () => {
    server = http.createServer((_req, res) => res.end('host-ok'));
    await new Promise<void>((resolve) => server.listen(0, '0.0.0.0', resolve));
    port = (server.address() as AddressInfo).port;
  });

  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
    await expectNoLeaks();
  });

  /**
   * Asks the host's server from inside the container, through `gateway`, with busybox `nc`
   * (its static `wget` crashes now and then); whether the answer came back.
   */
  async function reachesHost(session: Session, gateway: string): Promise<boolean> {
    const request = 'printf "GET / HTTP/1.0\\r\\n\\r\\n" | nc -w 3 "$0" "$1"';
    const out = await session.exec(['sh', '-c', request, gateway, String(port)]);
    return out.stdout.toString().endsWith('host-ok');
  }

  test("'deny-all' cuts the container off, 'allow-all' brings its network back; both idempotent", async ({ engine, sessionId, labels, track }) => {
    const session = track(await createSession({ ...engine, sessionId, labels, image: TEST_IMAGE, ports: [8080] }));
    const before = await networksOf(session.id);
    expect(before.length).toBe(1);
    const gateway = (await inspectContainer(session.id))?.NetworkSettings?.Networks?.[before[0]!]?.Gateway as string;
    expect(await reachesHost(session, gateway)).toBe(true);

    await session.setNetworkPolicy({ mode: 'deny-all' });
    await session.setNetworkPolicy({ mode: 'deny-all' });
    expect(await networksOf(session.id)).toEqual([]);
    const interfaces = await session.exec(['ls', '/sys/class/net']);
    expect(interfaces.stdout.toString().split(/\s+/).filter(Boolean)).toEqual(['lo']);
    expect(await reachesHost(session, gateway)).toBe(false);

    await session.setNetworkPolicy({ mode: 'allow-all' });
    await session.setNetworkPolicy({ mode: 'allow-all' });
    expect(await networksOf(session.id)).toEqual(before);
    const newGateway = (await inspectContainer(session.id))?.NetworkSettings?.Networks?.[before[0]!]?.Gateway as string;
    expect(await reachesHost(session, newGateway)).toBe(true);
  });

  test("an adopted handle may not switch it: E_SESSION_BUSY ('not-owner'), nothing changed", async ({ engine, sessionId, labels }) => {
    // Another process owns it (a resume in the creating process would share its duty).
    const creator = await startChild();
    try {
      const owner = await creator.call('createSession', { sessionId, labels, image: TEST_IMAGE });
      const adopted = await resumeSession({ ...engine, sessionId });
      expect(adopted.ownership).toBe('adopted');
      const before = await networksOf(owner.id);
      await expect(adopted.setNetworkPolicy({ mode: 'deny-all' })).rejects.toMatchObject({
        code: 'E_SESSION_BUSY',
        details: { reason: 'not-owner', id: owner.id },
      });
      expect(await networksOf(owner.id)).toEqual(before);
      await adopted.release();
      await creator.call('remove', owner.handle);
    } finally {
      await creator.kill();
    }
  });

  test('bad modes are refused and change nothing; a removed session is E_SESSION_NOT_FOUND', async ({ engine, sessionId, labels, track }) => {
    const session = track(await createSession({ ...engine, sessionId, labels, image: TEST_IMAGE }));
    const before = await networksOf(session.id);
    for (const mode of ['custom', 'none', '']) {
      await expect(session.setNetworkPolicy({ mode } as never)).rejects.toMatchObject({
        code: 'E_INVALID_ARGUMENT',
        details: { field: 'mode' },
      });
    }
    await expect(session.setNetworkPolicy(null as never)).rejects.toMatchObject({ code: 'E_INVALID_ARGUMENT' });
    expect(await networksOf(session.id)).toEqual(before);
    await session.remove();
    await expect(session.setNetworkPolicy({ mode: 'deny-all' })).rejects.toMatchObject({ code: 'E_SESSION_NOT_FOUND' });
  });

  test("a container created with networkMode 'none' cannot be given a network", async ({ engine, sessionId, labels, track }) => {
    const session = track(await createSession({ ...engine, sessionId, labels, image: TEST_IMAGE, networkMode: 'none' }));
    await session.setNetworkPolicy({ mode: 'deny-all' });
    await expect(session.setNetworkPolicy({ mode: 'allow-all' })).rejects.toMatchObject({
      code: 'E_INVALID_ARGUMENT',
      details: { field: 'mode', reason: expect.stringContaining('none') },
    });
  });

  test("the harness sandbox session offers setNetworkPolicy; 'custom' is refused", async ({ sessionId }) => {
    const sandbox = await createDockerSandboxProvider({ image: TEST_IMAGE, labels: testLabels() }).createSession({ sessionId });
    try {
      await sandbox.setNetworkPolicy?.({ mode: 'deny-all' });
      expect(await networksOf(sandbox.id)).toEqual([]);
      await expect(sandbox.setNetworkPolicy?.({ mode: 'custom', allowedHosts: ['example.com'] })).rejects.toMatchObject({
        code: 'E_INVALID_ARGUMENT',
      });
      await sandbox.setNetworkPolicy?.({ mode: 'allow-all' });
      expect((await networksOf(sandbox.id)).length).toBe(1);
    } finally {
      await sandbox.destroy();
    }
  });
});
