// A test engine that accepts and never answers: a unix socket HTTP server that answers
// `GET /_ping` and `GET /version` like Docker 20.10 (so connecting and API negotiation
// succeed), or nothing at all with `answerVersion: false`, and holds every other request open
// forever, recording it. It proves that berth's calls settle by their own deadline or signal
// whatever the engine does (docs/design.md#engines); the shared engines are never touched.
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const VERSION = {
  Platform: { Name: 'Docker Engine - Community' },
  Components: [{ Name: 'Engine', Version: '20.10.24', Details: { ApiVersion: '1.41', MinAPIVersion: '1.12' } }],
  Version: '20.10.24',
  ApiVersion: '1.41',
  MinAPIVersion: '1.12',
  Os: 'linux',
  Arch: 'amd64',
};

/**
 * Starts a hung engine on a fresh socket in a temp dir.
 * @param {{ answerVersion?: boolean }} [options]
 */
export async function startHungEngine({ answerVersion = true } = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'berth-hung-'));
  const socketPath = join(dir, 'engine.sock');
  /** @type {{ method: string, path: string }[]} */
  const requests = [];
  /** @type {Set<import('node:net').Socket>} */
  const sockets = new Set();
  const server = http.createServer((req, res) => {
    const path = (req.url ?? '').replace(/^\/v\d+(\.\d+)?(?=\/)/, '');
    requests.push({ method: req.method ?? '', path });
    req.resume();
    if (answerVersion && req.method === 'GET' && (path === '/_ping' || path.startsWith('/version'))) {
      const body = path === '/_ping' ? 'OK' : JSON.stringify(VERSION);
      res.writeHead(200, {
        'Content-Type': path === '/_ping' ? 'text/plain' : 'application/json',
        'Content-Length': Buffer.byteLength(body),
        'Api-Version': '1.41',
      });
      res.end(body);
      return;
    }
    // Accepted and never answered.
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  // Upgrades (exec attach) are held too.
  server.on('upgrade', (req) => {
    requests.push({ method: req.method ?? '', path: (req.url ?? '').replace(/^\/v\d+(\.\d+)?(?=\/)/, '') });
  });
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(socketPath, () => resolve(undefined));
  });
  return {
    /** The socket: pass as `socketPath` to berth. */
    socketPath,
    /** Every request seen, in arrival order (path without the API version prefix). */
    requests,
    /** Closes every connection and the server, and removes the socket's directory. */
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise((resolve) => server.close(() => resolve(undefined)));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
