// The floor: plain HTTP/1.1 requests on the engine's unix socket, over one keep-alive
// connection (or a fresh connection per request, to measure what keep-alive is worth).
// No client library: `node:http` with `socketPath`, JSON in and out, and the exec attach
// done as the Docker CLI and bollard do it (`Connection: Upgrade`, `Upgrade: tcp`).
import http from 'node:http';

/** The Engine API version every raw request names (Docker 20.10 and Podman 4.3 speak it). */
export const RAW_API_VERSION = 'v1.41';

/**
 * A raw engine client.
 * @param {string} socketPath unix socket of the engine
 * @param {{ keepAlive?: boolean }} [options] keepAlive: one reused connection (default true)
 */
export function rawEngine(socketPath, { keepAlive = true } = {}) {
  const agent = new http.Agent({ keepAlive, maxSockets: keepAlive ? 1 : Infinity });

  /**
   * One request; resolves `{ status, body }` (body parsed as JSON when it is JSON).
   * @param {string} method
   * @param {string} path API path without the version prefix
   * @param {unknown} [body] JSON body
   */
  function request(method, path, body) {
    return new Promise((resolve, reject) => {
      const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
      const req = http.request(
        {
          socketPath,
          agent,
          method,
          path: `/${RAW_API_VERSION}${path}`,
          headers: payload ? { 'content-type': 'application/json', 'content-length': payload.length } : {},
        },
        (res) => {
          const chunks = [];
          res.on('data', (c) => chunks.push(c));
          res.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            let parsed = text;
            if ((res.headers['content-type'] ?? '').includes('json') && text) parsed = JSON.parse(text);
            resolve({ status: res.statusCode ?? 0, body: parsed });
          });
          res.on('error', reject);
        },
      );
      req.on('error', reject);
      req.end(payload);
    });
  }

  /** Like `request`, but a status of 300 or more rejects. */
  async function ok(method, path, body) {
    const res = await request(method, path, body);
    if (res.status >= 300) throw new Error(`${method} ${path}: HTTP ${res.status} ${JSON.stringify(res.body)}`);
    return res.body;
  }

  /**
   * `POST /exec/{id}/start` attached (`Upgrade: tcp`), read to the end of the stream.
   * Resolves the raw multiplexed bytes.
   */
  function startExecAttached(execId) {
    return new Promise((resolve, reject) => {
      const payload = Buffer.from(JSON.stringify({ Detach: false, Tty: false }));
      // An upgraded connection is never returned to the pool: no agent.
      const req = http.request({
        socketPath,
        method: 'POST',
        path: `/${RAW_API_VERSION}/exec/${execId}/start`,
        headers: {
          'content-type': 'application/json',
          'content-length': payload.length,
          connection: 'Upgrade',
          upgrade: 'tcp',
        },
      });
      const collect = (stream, head) => {
        const chunks = head && head.length ? [head] : [];
        stream.on('data', (c) => chunks.push(c));
        stream.on('end', () => {
          stream.destroy();
          resolve(Buffer.concat(chunks));
        });
        stream.on('error', reject);
      };
      req.on('upgrade', (_res, socket, head) => collect(socket, head));
      req.on('response', (res) => {
        if ((res.statusCode ?? 0) >= 300) {
          res.resume();
          reject(new Error(`exec start: HTTP ${res.statusCode}`));
        } else collect(res);
      });
      req.on('error', reject);
      req.end(payload);
    });
  }

  /**
   * The engine's exec of `argv` in container `id` as three requests, the floor of any client's
   * exec: `POST /containers/{id}/exec`, `POST /exec/{id}/start` (attached, read to the end),
   * `GET /exec/{id}/json`. Resolves the exit code; a non-zero exit rejects.
   * @param {string} id container id
   * @param {string[]} argv
   */
  async function execSequence(id, argv) {
    const { Id } = await ok('POST', `/containers/${id}/exec`, { Cmd: argv, AttachStdout: true, AttachStderr: true, Tty: false });
    await startExecAttached(Id);
    const { ExitCode } = await ok('GET', `/exec/${Id}/json`);
    if (ExitCode !== 0) throw new Error(`raw exec ${argv.join(' ')}: exit ${ExitCode}`);
    return ExitCode;
  }

  return { request, ok, startExecAttached, execSequence, close: () => agent.destroy() };
}
