// The network guard's rules belong to one run of the container (they live in its network
// namespace, which a stop ends). A run berth did not guard (started by a process killed before
// its guard ran, by the engine's restart policy, by hand: here by hand, through the engine API,
// which is the same state) reaches the host; `verifySession` reports it (`network-unguarded`),
// its repair guards it, and a resume (plain, takeOver, the harness provider's handover)
// guards it before it hands the session out. Reachability is checked for real: an HTTP server
// on this host, fetched from inside the container through its network's gateway. Nothing
// leaks: the helpers are removed and the guard records go with the session.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect } from 'vitest';
import { createDockerSandboxProvider } from '../../harness.mjs';
import { createSession, resumeSession, verifySession, type Session } from '../../index.mjs';
import { startChild } from '../helpers/child.js';
import { inspectContainer, listContainers, startContainer, stopContainer } from '../helpers/engine-http.mjs';
import { request, startEngineProxy } from '../helpers/engine-proxy.mjs';
import { sessionTest as test } from '../helpers/fixtures.js';
import { recordsOf } from '../helpers/records.mjs';
import { testLabels } from '../helpers/run-label.mjs';
import { engineSuite } from '../helpers/suite.js';
import { TEST_IMAGE } from '../helpers/test-image.mjs';

engineSuite('network guard per run', () => {
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

  /** Whether the host's server answers a request from inside the session, through its gateway. */
  async function reachesHost(session: Session): Promise<boolean> {
    const networks = (await inspectContainer(session.id))?.NetworkSettings?.Networks ?? {};
    const gateway = (Object.values(networks)[0] as { Gateway: string }).Gateway;
    const request = 'printf "GET / HTTP/1.0\\r\\n\\r\\n" | nc -w 3 "$0" "$1"';
    const out = await session.exec(['sh', '-c', request, gateway, String(port)]);
    return out.stdout.toString().endsWith('host-ok');
  }

  /** A new run of the container that berth did not start: stopped and started through the engine API. */
  async function restartBehindBerthsBack(id: string, engine: { socketPath?: string }): Promise<void> {
    await stopContainer(id, engine);
    await startContainer(id, engine);
    expect((await inspectContainer(id, engine))?.State.Running).toBe(true);
  }

  /** The guard records of container `id`. */
  async function guardRecords(id: string): Promise<string[]> {
    return (await recordsOf(id)).filter((r) => r.kind === 'guard').map((r) => r.name);
  }

  /** The guard helpers of container `id`, in any state. */
  async function helpersOf(id: string, engine: { socketPath?: string }): Promise<unknown[]> {
    return listContainers({ label: [`dev.berth.helper.for=${id}`] }, engine);
  }

  test('an unguarded run is reported by verify, guarded by its repair and by a resume (plain and takeOver); one record, no helper left', async ({ engine, sessionId, labels, track }) => {
    const session = track(await createSession({ ...engine, sessionId, labels, image: TEST_IMAGE }));
    expect(await reachesHost(session)).toBe(false);
    expect(await guardRecords(session.id)).toHaveLength(1);

    // The state a process killed between its start and its guard leaves: the run reaches the host.
    await restartBehindBerthsBack(session.id, engine);
    expect(await reachesHost(session)).toBe(true);

    const report = await verifySession(sessionId, { ...engine, repair: false });
    expect(report.ok).toBe(false);
    expect(report.findings).toEqual([expect.objectContaining({ code: 'network-unguarded', kind: 'repairable', repaired: false })]);
    // Without repair nothing changed.
    expect(await reachesHost(session)).toBe(true);

    const repaired = await verifySession(sessionId, engine);
    expect(repaired.ok).toBe(true);
    expect(repaired.findings).toEqual([expect.objectContaining({ code: 'network-unguarded', repaired: true })]);
    expect(await reachesHost(session)).toBe(false);
    expect((await verifySession(sessionId, { ...engine, repair: false })).ok).toBe(true);

    for (const takeOver of [false, true]) {
      await restartBehindBerthsBack(session.id, engine);
      const resumed = await resumeSession({ ...engine, sessionId, takeOver });
      expect(await reachesHost(resumed)).toBe(false);
      if (resumed.ownership === 'adopted') await resumed.release();
    }
    // A stopped session resumed: started and guarded by the resume itself.
    await stopContainer(session.id, engine);
    const resumed = await resumeSession({ ...engine, sessionId });
    expect(await reachesHost(resumed)).toBe(false);

    // One record (the current run's), no helper left; removal takes the record with it.
    expect(await guardRecords(session.id)).toHaveLength(1);
    expect(await helpersOf(session.id, engine)).toEqual([]);
    await session.remove();
    expect(await guardRecords(session.id)).toEqual([]);
  });

  test('a takeOver resume SIGKILLed between its start and its guard leaves the run unguarded; the next resume guards it', async ({ engine, sessionId, labels, track }) => {
    const session = track(await createSession({ ...engine, sessionId, labels, image: TEST_IMAGE }));
    await session.stop({ timeoutMs: 0 });
    const proxy = await startEngineProxy();
    const child = await startChild();
    try {
      // The only container a resume creates is the guard's helper: held, the resume is past its start.
      const helperCreate = request('POST', /^\/containers\/create/);
      const held = proxy.hold(helperCreate);
      const resuming = child.call('resumeSession', { sessionId, takeOver: true, socketPath: proxy.socketPath }).catch(() => undefined);
      await held.arrived;
      await child.kill('SIGKILL');
      await resuming;
      // The held create is refused, never forwarded: no helper is made for the dead process.
      proxy.fail(helperCreate, { status: 500 });
      held.release();
    } finally {
      await child.kill();
      await proxy.close();
    }
    expect((await inspectContainer(session.id, engine))?.State.Running).toBe(true);
    expect(await reachesHost(session)).toBe(true);
    const resumed = await resumeSession({ ...engine, sessionId, takeOver: true });
    expect(await reachesHost(resumed)).toBe(false);
    expect(await helpersOf(session.id, engine)).toEqual([]);
  });

  test("the harness provider's resume guards an unguarded run before it hands the sandbox out", async ({ engine, sessionId, labels, track }) => {
    const session = track(await createSession({ ...engine, sessionId, labels, image: TEST_IMAGE }));
    await restartBehindBerthsBack(session.id, engine);
    expect(await reachesHost(session)).toBe(true);
    const sandbox = await createDockerSandboxProvider({ ...engine, image: TEST_IMAGE, labels: testLabels() }).resumeSession!({ sessionId });
    try {
      expect(sandbox.id).toBe(session.name);
      expect(await reachesHost(session)).toBe(false);
    } finally {
      await sandbox.destroy();
    }
    expect(await guardRecords(session.id)).toEqual([]);
  });
});
