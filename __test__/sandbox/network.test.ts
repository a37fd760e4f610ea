// Session.setNetworkPolicy on the real engine: 'deny-all' detaches the container from every
// network, 'allow-all' attaches it to the one it was created on; only an owning handle may
// switch it. And the default isolation: a session reaches neither the host's services nor
// other containers unless created with `localNetwork: true`. Reachability is checked for real:
// an HTTP server on the host, fetched from inside the container through its network's gateway
// and the host's own address; a server in another session. Every packet stays on this machine.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import { afterAll, beforeAll, expect } from 'vitest';
import { createDockerSandboxProvider } from '../../harness.mjs';
import { createSession, reapOrphans, resumeSession, type Session } from '../../index.mjs';
import { startChild } from '../helpers/child.js';
import { createContainer, inspectContainer, startContainer, waitContainer } from '../helpers/engine-http.mjs';
import { sessionTest as test } from '../helpers/fixtures.js';
import { testLabels, testSessionId } from '../helpers/run-label.mjs';
import { TEST_IMAGE } from '../helpers/test-image.mjs';
import { engineSuite } from '../helpers/suite.js';

/** The names of the networks the container is attached to, from inspect. */
async function networksOf(id: string): Promise<string[]> {
  return Object.keys((await inspectContainer(id))?.NetworkSettings?.Networks ?? {}).sort();
}

engineSuite('network policy', () => {
  let server: http.Server;
  let port = 0;

  beforeAll(async () => {
    server = http.createServer((_req, res) => res.end('host-ok'));
    await new Promise<void>((resolve) => server.listen(0, '0.0.0.0', resolve));
    port = (server.address() as AddressInfo).port;
  });

  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
  });

  /**
   * Asks the host's server from inside the container, through `gateway`, with busybox `nc`
   * (its static `wget` crashes now and then); whether the answer came back.
   */
  async function reachesHost(session: Session, gateway: string, to = port, answer = 'host-ok'): Promise<boolean> {
    const request = 'printf "GET / HTTP/1.0\\r\\n\\r\\n" | nc -w 3 "$0" "$1"';
    const out = await session.exec(['sh', '-c', request, gateway, String(to)]);
    return out.stdout.toString().endsWith(answer);
  }

  /** The first network's gateway and the container's own address on it, from inspect. */
  async function addressesOf(id: string): Promise<{ gateway: string; ip: string }> {
    const networks = (await inspectContainer(id))?.NetworkSettings?.Networks ?? {};
    const first = Object.values(networks)[0] as { Gateway: string; IPAddress: string };
    return { gateway: first.Gateway, ip: first.IPAddress };
  }

  /** This machine's own non-loopback IPv4 address outside the engines' bridges (its LAN side). */
  function hostAddress(): string | undefined {
    for (const [name, list] of Object.entries(os.networkInterfaces())) {
      if (/^(docker|br-|podman|veth|cni)/.test(name)) continue;
      const v4 = list?.find((a) => a.family === 'IPv4' && !a.internal);
      if (v4) return v4.address;
    }
    return undefined;
  }

  /** Serves `answer` over HTTP on port 8080 inside the session, in the background. */
  async function serve(session: Session, answer: string): Promise<void> {
    const loop = 'while true; do printf "HTTP/1.0 200 OK\\r\\n\\r\\n%s" "$0" | nc -l -p 8080; done';
    await session.exec(['sh', '-c', `(${loop}) </dev/null >/dev/null 2>&1 &`, answer]);
  }

  test("'deny-all' cuts the container off, 'allow-all' brings its network back; both idempotent", async ({ engine, sessionId, labels, track }) => {
    const session = track(await createSession({ ...engine, sessionId, labels, image: TEST_IMAGE, ports: [8080], localNetwork: true }));
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

  test('by default a session reaches neither the host nor another session; its published port answers; root cannot lift it; a stop, a resume and deny/allow keep it', async ({ engine, sessionId, labels, track }) => {
    const server = track(await createSession({ ...engine, sessionId, labels, image: TEST_IMAGE, ports: [8080] }));
    await serve(server, 'server-ok');
    // The engine's port forwarder still reaches it (its replies to the gateway are let through).
    const address = await server.hostAddress(8080);
    const fetchOnce = (): Promise<string> =>
      new Promise((resolve) => {
        http
          .get(`http://${address}/`, (res) => {
            let body = '';
            res.on('data', (c: Buffer) => (body += c.toString()));
            res.on('end', () => resolve(body));
          })
          .on('error', () => resolve(''));
      });
    // The background server may need a moment to listen: retried, a generous bound for hangs only.
    let published = '';
    for (let i = 0; i < 50 && published !== 'server-ok'; i++) {
      published = await fetchOnce();
      if (published !== 'server-ok') await new Promise((r) => setTimeout(r, 100));
    }
    expect(published).toBe('server-ok');

    const opted = track(await createSession({ ...engine, sessionId: testSessionId('opted'), labels, image: TEST_IMAGE, localNetwork: true }));
    const client = track(await createSession({ ...engine, sessionId: testSessionId('client'), labels, image: TEST_IMAGE }));
    const { gateway } = await addressesOf(client.id);
    const neighbour = (await addressesOf(server.id)).ip;
    const lan = hostAddress();
    // The opted-in session reaches the host: the server below is really there.
    expect(await reachesHost(opted, gateway)).toBe(true);

    const isolated = async (): Promise<void> => {
      expect(await reachesHost(client, gateway)).toBe(false);
      if (lan) expect(await reachesHost(client, lan)).toBe(false);
      expect(await reachesHost(client, neighbour, 8080, 'server-ok')).toBe(false);
    };
    await isolated();
    // Its replies are refused too: even an opted-in neighbour gets nothing from it.
    expect(await reachesHost(opted, neighbour, 8080, 'server-ok')).toBe(false);

    // Root in the sandbox cannot remove the rules, flush its routes or add an address.
    const lift = await client.exec(['sh', '-c', 'ip rule del pref 200; echo rule=$?; ip route flush table main; echo flush=$?; ip addr add 10.99.0.9/32 dev eth0; echo addr=$?']);
    expect(lift.stdout.toString()).not.toMatch(/=0$/m);
    // The engine's resolvers stay reachable on port 53 (the rule is there; no query is sent).
    const rules = (await client.exec(['ip', 'rule'])).stdout.toString();
    const resolvConf = (await client.exec(['cat', '/etc/resolv.conf'])).stdout.toString();
    for (const ns of resolvConf.match(/^nameserver\s+(\S+)/gm) ?? []) {
      const address = ns.split(/\s+/)[1]!;
      if (!address.startsWith('127.')) expect(rules).toContain(`to ${address} lookup main`);
    }
    await isolated();

    await client.setNetworkPolicy({ mode: 'deny-all' });
    await client.setNetworkPolicy({ mode: 'allow-all' });
    await isolated();

    await client.stop();
    const resumed = track(await resumeSession({ ...engine, sessionId: client.sessionId }));
    await isolated();
    await resumed.remove();
  });

  test('a guard helper left by a killed process (exited, unnamed, with the caller labels) is reaped once its sandbox is gone', async ({ engine, sessionId, labels, track, session }) => {
    // What a process killed during the guard's run leaves: made here by hand, with berth's labels.
    const helper = await createContainer(undefined, { Image: TEST_IMAGE, Entrypoint: ['true'], Labels: { ...labels, 'dev.berth.helper': 'netguard', 'dev.berth.helper.for': session.id } }, engine);
    await startContainer(helper, engine);
    await waitContainer(helper, engine);
    // Its sandbox still there and the helper young: a run in progress, kept.
    expect((await reapOrphans({ ...engine, labels })).removedHelpers).not.toContain(helper);
    await session.remove();
    const dry = await reapOrphans({ ...engine, labels, dryRun: true });
    expect(dry.removedHelpers).toContain(helper);
    expect(await inspectContainer(helper, engine)).not.toBeNull();
    const report = await reapOrphans({ ...engine, labels });
    expect(report.removedHelpers).toContain(helper);
    // A run narrowed by labels never touches images.
    expect(report.removedImages).toEqual([]);
    expect(await inspectContainer(helper, engine)).toBeNull();
  });

  test("localNetwork is checked: 'host' or another container's network needs it; nothing is created", async ({ engine, sessionId, labels }) => {
    for (const networkMode of ['host', 'container:0123456789ab']) {
      await expect(createSession({ ...engine, sessionId, labels, image: TEST_IMAGE, networkMode })).rejects.toMatchObject({
        code: 'E_INVALID_ARGUMENT',
        details: { field: 'networkMode' },
      });
    }
    await expect(createSession({ ...engine, sessionId, labels, image: TEST_IMAGE, localNetwork: 'yes' as never })).rejects.toMatchObject({
      code: 'E_INVALID_ARGUMENT',
      details: { field: 'localNetwork' },
    });
    expect(await resumeSession({ ...engine, sessionId }).catch((e: { code: string }) => e.code)).toBe('E_SESSION_NOT_FOUND');
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

  test('bad modes are refused and change nothing; a removed session is E_SESSION_NOT_FOUND', async ({ engine, sessionId, labels, track, session }) => {
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
