// A remote engine: the engine under test reached over tcp:// (socat forwards 127.0.0.2:<port>
// to its unix socket, standing in for a remote host). berth speaks plain HTTP to it, and
// hostAddress names the engine's host instead of 127.0.0.1.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect } from 'vitest';
import { createSession, engineInfo, peek } from '../index.mjs';
import { engineAvailable } from './helpers/engine-available.js';
import { sessionTest as test } from './helpers/fixtures.js';
import { expectNoLeaks } from './helpers/leak-check.mjs';
import { testEngineName, testSocketPath } from './helpers/test-engine.mjs';
import { TEST_IMAGE } from './helpers/test-image.mjs';

/** A loopback address other than 127.0.0.1, so the test can tell the engine's host from it. */
const REMOTE_HOST = '127.0.0.2';
const hasSocat = spawnSync('sh', ['-c', 'command -v socat'], { stdio: 'ignore' }).status === 0;

function freePort(host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, host, () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

function answers(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port }, () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

describe.skipIf(!engineAvailable() || !hasSocat)('remote engine over tcp://', () => {
  let socat: ChildProcess | undefined;
  let endpoint = '';

  beforeAll(async () => {
    const port = await freePort(REMOTE_HOST);
    socat = spawn('socat', [`TCP-LISTEN:${port},bind=${REMOTE_HOST},fork,reuseaddr`, `UNIX-CONNECT:${testSocketPath()}`], {
      stdio: 'ignore',
    });
    for (let i = 0; i < 100 && !(await answers(REMOTE_HOST, port)); i++) await new Promise((r) => setTimeout(r, 50));
    endpoint = `tcp://${REMOTE_HOST}:${port}`;
  });

  afterAll(async () => {
    socat?.kill();
    await expectNoLeaks();
  });

  test('engineInfo reports the remote endpoint', async () => {
    const info = await engineInfo({ socketPath: endpoint });
    expect(info).toMatchObject({ kind: testEngineName(), endpoint, remote: true });
  });

  test("hostAddress and peek name the engine's host, not 127.0.0.1", async ({ sessionId, labels, track }) => {
    const session = track(await createSession({ socketPath: endpoint, sessionId, labels, image: TEST_IMAGE, ports: [8080] }));
    const address = await session.hostAddress(8080);
    expect(address).toMatch(new RegExp(`^${REMOTE_HOST.replaceAll('.', '\\.')}:\\d+$`));
    const seen = await peek(sessionId, { socketPath: endpoint });
    expect(seen?.ports['8080/tcp']).toBe(address);
    expect((await session.exec(['echo', 'over tcp'])).stdout.toString()).toBe('over tcp\n');
  });
});
