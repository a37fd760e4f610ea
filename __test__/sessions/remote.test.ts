// A remote engine: the engine under test reached over tcp:// (socat forwards 127.0.0.2:<port>
// to its unix socket, standing in for a remote host). berth speaks plain HTTP to it, and
// hostAddress names the engine's host instead of 127.0.0.1. With DOCKER_TLS_VERIFY and
// DOCKER_CERT_PATH, berth speaks TLS with a client certificate (to a Node TLS proxy in front
// of the socket, with a throwaway CA made by openssl).
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import tls from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSession, EngineUnavailableError, engineInfo, peek } from '../../index.mjs';
import { engineAvailable } from '../helpers/engine-available.js';
import { sessionTest as test } from '../helpers/fixtures.js';
import { expectNoLeaks } from '../helpers/leak-check.mjs';
import { testEngineName, testSocketPath } from '../helpers/test-engine.mjs';
import { TEST_IMAGE } from '../helpers/test-image.mjs';

/** A loopback address other than 127.0.0.1, so the test can tell the engine's host from it. */
const REMOTE_HOST = '127.0.0.2';
const hasSocat = spawnSync('sh', ['-c', 'command -v socat'], { stdio: 'ignore' }).status === 0;
const hasOpenssl = spawnSync('sh', ['-c', 'command -v openssl'], { stdio: 'ignore' }).status === 0;

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

/** A CA, a server certificate for `host` and a client certificate, as Docker's cert dir wants them. */
function makeCerts(host: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'berth-tls-'));
  const run = (args: string[]): void => {
    const r = spawnSync('openssl', args, { cwd: dir, encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`openssl ${args.join(' ')}: ${r.stderr}`);
  };
  const key = (out: string, csr: string, cn: string): void =>
    run(['req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', out, '-out', csr, '-subj', `/CN=${cn}`]);
  run(['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', 'ca-key.pem', '-out', 'ca.pem', '-days', '1', '-subj', '/CN=berth test CA']);
  key('server-key.pem', 'server.csr', host);
  writeFileSync(join(dir, 'server.ext'), `subjectAltName=IP:${host}\nextendedKeyUsage=serverAuth\n`);
  run(['x509', '-req', '-in', 'server.csr', '-CA', 'ca.pem', '-CAkey', 'ca-key.pem', '-CAcreateserial', '-out', 'server-cert.pem', '-days', '1', '-extfile', 'server.ext']);
  key('key.pem', 'client.csr', 'berth client');
  writeFileSync(join(dir, 'client.ext'), 'extendedKeyUsage=clientAuth\n');
  run(['x509', '-req', '-in', 'client.csr', '-CA', 'ca.pem', '-CAkey', 'ca-key.pem', '-CAcreateserial', '-out', 'cert.pem', '-days', '1', '-extfile', 'client.ext']);
  return dir;
}

/** Runs `fn` with these env variables set, restoring the previous values after. */
async function withEnv<T>(vars: Record<string, string>, fn: () => Promise<T>): Promise<T> {
  const saved = Object.fromEntries(Object.keys(vars).map((k) => [k, process.env[k]]));
  Object.assign(process.env, vars);
  try {
    return await fn();
  } finally {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
}

describe.skipIf(!engineAvailable() || !hasOpenssl)('remote engine over TLS (DOCKER_TLS_VERIFY)', () => {
  let server: tls.Server | undefined;
  let certDir = '';
  let endpoint = '';

  beforeAll(async () => {
    certDir = makeCerts(REMOTE_HOST);
    const read = (f: string): Buffer => readFileSync(join(certDir, f));
    server = tls.createServer(
      { key: read('server-key.pem'), cert: read('server-cert.pem'), ca: read('ca.pem'), requestCert: true, rejectUnauthorized: true },
      (client) => {
        const engine = net.connect(testSocketPath());
        client.pipe(engine).pipe(client);
        client.on('error', () => engine.destroy());
        engine.on('error', () => client.destroy());
      },
    );
    const port = await freePort(REMOTE_HOST);
    await new Promise<void>((resolve) => server!.listen(port, REMOTE_HOST, resolve));
    endpoint = `tcp://${REMOTE_HOST}:${port}`;
  });

  afterAll(async () => {
    await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
    if (certDir) rmSync(certDir, { recursive: true, force: true });
    await expectNoLeaks();
  });

  it('speaks TLS with the client certificate from DOCKER_CERT_PATH', async () => {
    const info = await withEnv({ DOCKER_HOST: endpoint, DOCKER_TLS_VERIFY: '1', DOCKER_CERT_PATH: certDir }, () => engineInfo());
    expect(info).toMatchObject({ kind: testEngineName(), endpoint, remote: true });
  });

  it('missing certificates are E_ENGINE_UNAVAILABLE naming the directory', async () => {
    const missing = join(certDir, 'nowhere');
    const error = await withEnv({ DOCKER_HOST: endpoint, DOCKER_TLS_VERIFY: '1', DOCKER_CERT_PATH: missing }, () =>
      engineInfo(),
    ).catch((e: unknown) => e);
    expect(EngineUnavailableError.isInstance(error)).toBe(true);
    expect((error as EngineUnavailableError).details.reason).toContain(missing);
  });
});
