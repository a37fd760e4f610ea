// A unix-socket proxy in front of the engine under test, for proving what berth sends: every
// request is recorded (so "no engine call" is counted, not assumed), and a test can hold a
// request until it says so (an operation in flight) or answer one itself with an HTTP error
// (a failure of that one call, without stopping the shared engine), forward one and lose its
// answer (the engine did it, berth never hears: `drop`), or stop answering altogether
// (`hangAll`: a hung engine that still accepts connections). Hijacked connections (exec attach)
// are piped through untouched unless the proxy hangs.
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { testSocketPath } from './test-engine.mjs';

/**
 * One request the proxy saw. `path` is without the API version prefix (`/containers/create?name=x`).
 * `seq` and `answeredSeq` come from one counter: `seq` when the request arrived, `answeredSeq` when
 * its answer's head was sent (null until then), so "B arrived after A was answered" is
 * `B.seq > A.answeredSeq`.
 * @typedef {{ seq: number, method: string, path: string, answeredSeq: number | null, injected: boolean }} ProxiedRequest
 */

/** @typedef {(request: { method: string, path: string }) => boolean} RequestMatch */

/**
 * A matcher: `method` exactly and `path` (without the version prefix) by regular expression.
 * @param {string} method
 * @param {RegExp} path
 * @returns {RequestMatch}
 */
export function request(method, path) {
  return (r) => r.method === method && path.test(r.path);
}

/**
 * Starts the proxy on a fresh socket in a temp dir, forwarding to `target` (the engine under test).
 * @param {{ target?: string }} [options]
 */
export async function startEngineProxy({ target = testSocketPath() } = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'berth-proxy-'));
  const socketPath = join(dir, 'engine.sock');
  /** @type {ProxiedRequest[]} */
  const requests = [];
  /** @type {{ match: RequestMatch, status: number, times: number }[]} */
  const failures = [];
  /** @type {{ match: RequestMatch, arrived: () => void, released: Promise<void> }[]} */
  const holds = [];
  /** @type {{ match: RequestMatch, times: number, mode: 'hang' | 'destroy', forwarded: () => void }[]} */
  const drops = [];
  let hangingAll = false;
  /** Requests (and upgrades) left unanswered on purpose, ended by `recover()` or `close()`. */
  /** @type {Set<{ destroy: () => void }>} */
  const hung = new Set();
  /** Upgraded (hijacked) connections, which the HTTP server no longer tracks. */
  /** @type {Set<import("node:stream").Duplex>} */
  const upgraded = new Set();
  let seq = 0;

  /** @param {http.IncomingMessage} req */
  const record = (req) => {
    /** @type {ProxiedRequest} */
    const entry = {
      seq: ++seq,
      method: req.method ?? '',
      path: (req.url ?? '').replace(/^\/v\d+(\.\d+)?(?=\/)/, ''),
      answeredSeq: null,
      injected: false,
    };
    requests.push(entry);
    return entry;
  };

  const server = http.createServer(async (req, res) => {
    const entry = record(req);
    if (hangingAll) {
      // Accepted, read, never answered.
      req.resume();
      hung.add(res.socket ?? res);
      return;
    }
    const hold = holds.find((h) => h.match(entry));
    if (hold) {
      holds.splice(holds.indexOf(hold), 1);
      hold.arrived();
      await hold.released;
    }
    const failure = failures.find((f) => f.times > 0 && f.match(entry));
    if (failure) {
      failure.times -= 1;
      entry.injected = true;
      req.resume();
      const body = JSON.stringify({ message: `refused by the test proxy: ${entry.method} ${entry.path}` });
      res.writeHead(failure.status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) });
      entry.answeredSeq = ++seq;
      res.end(body);
      return;
    }
    // Request bodies here are small (JSON, test archives): read whole, then sent in one write.
    /** @type {Buffer[]} */
    const chunks = [];
    try {
      for await (const chunk of req) chunks.push(chunk);
    } catch {
      // The client went away mid-body (an aborted upload): nothing to forward or answer.
      return;
    }
    const body = Buffer.concat(chunks);
    const headers = { ...req.headers };
    delete headers['transfer-encoding'];
    if (body.length > 0 || headers['content-length'] !== undefined) headers['content-length'] = String(body.length);
    const drop = drops.find((d) => d.times > 0 && d.match(entry));
    if (drop) drop.times -= 1;
    const upstream = http.request(
      { socketPath: target, method: req.method, path: req.url, headers, agent: false },
      (up) => {
        if (drop) {
          // The engine did it; its answer is lost.
          up.resume();
          drop.forwarded();
          if (drop.mode === 'destroy') res.destroy();
          else hung.add(res.socket ?? res);
          return;
        }
        res.writeHead(up.statusCode ?? 502, up.headers);
        entry.answeredSeq = ++seq;
        up.pipe(res);
      },
    );
    upstream.on('error', (error) => {
      if (res.headersSent) return void res.destroy();
      res.writeHead(502, { 'Content-Type': 'text/plain' });
      res.end(String(error));
    });
    upstream.end(body);
  });

  // Exec attach and friends upgrade the connection: replay the head, then pipe raw bytes.
  server.on('upgrade', (req, socket, head) => {
    const entry = record(req);
    if (hangingAll) {
      hung.add(socket);
      return;
    }
    const upstream = net.connect(target, () => {
      const lines = [`${req.method} ${req.url} HTTP/${req.httpVersion}`];
      for (let i = 0; i < req.rawHeaders.length; i += 2) lines.push(`${req.rawHeaders[i]}: ${req.rawHeaders[i + 1]}`);
      upstream.write(`${lines.join('\r\n')}\r\n\r\n`);
      if (head.length) upstream.write(head);
      entry.answeredSeq = ++seq;
      upstream.pipe(socket);
      socket.pipe(upstream);
    });
    upgraded.add(socket);
    upgraded.add(upstream);
    socket.on('close', () => {
      upgraded.delete(socket);
      upgraded.delete(upstream);
    });
    upstream.on('error', () => socket.destroy());
    socket.on('error', () => upstream.destroy());
  });

  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(socketPath, () => resolve(undefined));
  });

  return {
    /** The proxy's socket: pass as `socketPath` to berth. */
    socketPath,
    /** Every request seen so far, in arrival order. */
    requests,
    /**
     * The requests seen while `fn` ran (`fn`'s own calls, when nothing else uses the proxy).
     * @template T
     * @param {() => Promise<T>} fn
     * @returns {Promise<{ value: T, requests: ProxiedRequest[] }>}
     */
    async during(fn) {
      const from = requests.length;
      const value = await fn();
      return { value, requests: requests.slice(from) };
    },
    /**
     * Answers the next `times` requests matching `match` with HTTP `status` itself (a JSON
     * `{ message }` body, as the engine sends), without forwarding them.
     * @param {RequestMatch} match
     * @param {{ status?: number, times?: number }} [options]
     */
    fail(match, { status = 500, times = 1 } = {}) {
      failures.push({ match, status, times });
    },
    /**
     * Holds the next request matching `match` before forwarding it: `arrived` resolves once it
     * is held, `release()` lets it through.
     * @param {RequestMatch} match
     */
    hold(match) {
      /** @type {() => void} */
      let arrived = () => {};
      /** @type {() => void} */
      let release = () => {};
      const arrivedPromise = new Promise((resolve) => (arrived = () => resolve(undefined)));
      const released = new Promise((resolve) => (release = () => resolve(undefined)));
      holds.push({ match, arrived, released: /** @type {Promise<void>} */ (released) });
      return { arrived: arrivedPromise, release };
    },
    /**
     * Forwards the next `times` requests matching `match` to the engine, then loses the answer:
     * `mode: 'hang'` never answers, `'destroy'` closes the connection. `forwarded` resolves once
     * the engine answered the (first) dropped request.
     * @param {RequestMatch} match
     * @param {{ times?: number, mode?: 'hang' | 'destroy' }} [options]
     */
    drop(match, { times = 1, mode = 'hang' } = {}) {
      /** @type {() => void} */
      let forwarded = () => {};
      const forwardedPromise = new Promise((resolve) => (forwarded = () => resolve(undefined)));
      drops.push({ match, times, mode, forwarded });
      return { forwarded: forwardedPromise };
    },
    /**
     * From now on every request and upgrade is accepted and never answered (a hung engine).
     * `existing: true` also stops forwarding on the connections already upgraded (exec attach:
     * the command channels), both ways; `recover()` then closes them.
     * @param {{ existing?: boolean }} [options]
     */
    hangAll({ existing = false } = {}) {
      hangingAll = true;
      if (existing) {
        for (const s of upgraded) {
          s.unpipe();
          s.pause();
          hung.add(s);
        }
      }
    },
    /** Answers again: ends the hung requests' connections and stops hanging new ones. */
    recover() {
      hangingAll = false;
      for (const h of hung) h.destroy();
      hung.clear();
    },
    /** Stops listening, drops open connections and removes the socket's directory. */
    async close() {
      for (const h of [...hung, ...upgraded]) h.destroy();
      hung.clear();
      upgraded.clear();
      server.closeAllConnections?.();
      await new Promise((resolve) => server.close(() => resolve(undefined)));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
