// A unix-socket proxy in front of the engine that records every HTTP request passing through
// it: method, path (API version stripped), JSON body, and how long the engine took (request
// start to the first and to the last byte of the answer, and to the end of the exchange). The benchmark uses
// it to list the requests berth makes per operation (the raw contender replays those) and to
// profile where an agent turn's time goes.
import net from 'node:net';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';

const HEAD_END = Buffer.from('\r\n\r\n');

/**
 * @typedef {{ method: string, path: string, body?: unknown, firstByteMs?: number, lastByteMs?: number, totalMs?: number }} Recorded
 */

/**
 * Starts a proxy on a fresh socket path forwarding to `target` (a unix socket path).
 * @returns {Promise<{ socketPath: string, take: () => Recorded[], close: () => Promise<void> }>}
 */
export async function startRecordingProxy(target) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'berth-bench-proxy-'));
  const socketPath = path.join(dir, 'engine.sock');
  /** @type {Recorded[]} */
  let seen = [];
  const sockets = new Set();
  const server = net.createServer({ allowHalfOpen: true }, (client) => {
    const upstream = net.connect({ path: target, allowHalfOpen: true });
    sockets.add(client).add(upstream);
    let pending = Buffer.alloc(0);
    let bodyLeft = 0;
    let raw = false; // after an upgrade, bytes are no longer HTTP
    /** @type {(Recorded & { t0: number, buf?: Buffer[] }) | undefined} */
    let current;
    const finish = () => {
      if (current && current.totalMs === undefined) current.totalMs = performance.now() - current.t0;
    };
    client.on('data', (chunk) => {
      upstream.write(chunk);
      if (raw) return;
      pending = Buffer.concat([pending, chunk]);
      for (;;) {
        if (bodyLeft > 0) {
          const take = Math.min(bodyLeft, pending.length);
          current?.buf?.push(pending.subarray(0, take));
          pending = pending.subarray(take);
          bodyLeft -= take;
          if (bodyLeft === 0 && current?.buf) {
            try {
              current.body = JSON.parse(Buffer.concat(current.buf).toString('utf8'));
            } catch {
              // not JSON (a tar upload): keep no body
            }
            delete current.buf;
          }
          if (bodyLeft > 0) return;
        }
        const end = pending.indexOf(HEAD_END);
        if (end < 0) return;
        const head = pending.subarray(0, end).toString('latin1');
        pending = pending.subarray(end + 4);
        const [line, ...headers] = head.split('\r\n');
        const [method, target] = line.split(' ');
        finish();
        current = { method, path: target.replace(/^\/v\d+\.\d+/, ''), t0: performance.now() };
        seen.push(current);
        const header = (name) =>
          headers.find((h) => h.toLowerCase().startsWith(`${name}:`))?.slice(name.length + 1).trim();
        const length = Number(header('content-length') ?? 0);
        const chunked = (header('transfer-encoding') ?? '').toLowerCase() === 'chunked';
        if ((header('upgrade') ?? '') !== '' || chunked) {
          raw = true; // exec attach or a streamed upload: stop parsing this connection
          return;
        }
        if (length > 0) {
          bodyLeft = length;
          if (/json/.test(header('content-type') ?? '')) current.buf = [];
        }
      }
    });
    upstream.on('data', (chunk) => {
      if (current) {
        const at = performance.now() - current.t0;
        current.firstByteMs ??= at;
        current.lastByteMs = at;
      }
      client.write(chunk);
    });
    const end = () => {
      finish();
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    // Half-closes pass through (`docker exec -i` ends stdin this way and waits for the output).
    client.on('end', () => upstream.end());
    upstream.on('end', () => client.end());
    client.on('close', end).on('error', end);
    upstream.on('close', end).on('error', end);
  });
  await new Promise((resolve) => server.listen(socketPath, resolve));
  return {
    socketPath,
    take: () => {
      const out = seen.map(({ t0: _t0, buf: _buf, ...r }) => r);
      seen = [];
      return out;
    },
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise((resolve) => server.close(resolve));
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
