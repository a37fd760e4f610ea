// Raw Docker Engine API requests over the unix socket of the engine under test (Docker or
// Podman, see test-engine.mjs), for tests: creating a foreign container by hand, listing by
// label, inspecting, removing. Never the docker CLI, never a pull.
import http from 'node:http';
import { testSocketPath } from './test-engine.mjs';

/** Engine API version the helpers address (Debian's Docker 20.10 and Podman 4.3 speak 1.41). */
export const ENGINE_API_VERSION = 'v1.41';
const DEFAULT_TIMEOUT_MS = 120_000;

/** @typedef {{ socketPath?: string }} SocketOptions */
/** @typedef {{ status: number, body: any, text: string, raw: Buffer }} EngineResponse */

/**
 * The engine socket: `socketPath` if given, else the engine under test's (see
 * {@link testSocketPath}: BERTH_TEST_SOCKET, Podman's CI socket, DOCKER_HOST, /var/run/docker.sock).
 * @param {string} [socketPath]
 * @returns {string}
 */
export function resolveSocketPath(socketPath) {
  return socketPath || testSocketPath();
}

/**
 * One Engine API request.
 * @param {string} method
 * @param {string} path Path after the version, e.g. `/containers/json?all=1`.
 * @param {{ body?: any, headers?: Record<string,string>, socketPath?: string, timeoutMs?: number }} [options]
 *   `body`: a Buffer or a readable stream is sent as is, anything else as JSON.
 * @returns {Promise<EngineResponse>} `body` is the parsed JSON, or null when the reply is not JSON;
 *   `raw` the bytes.
 */
export function engineRequest(method, path, { body, headers = {}, socketPath, timeoutMs = DEFAULT_TIMEOUT_MS } = {}) {
  return new Promise((resolve, reject) => {
    const isStream = body != null && typeof body.pipe === 'function';
    const payload = body === undefined || isStream || Buffer.isBuffer(body) ? body : Buffer.from(JSON.stringify(body));
    /** @type {Record<string, string>} */
    const reqHeaders = { ...headers };
    if (payload !== undefined && !isStream) {
      reqHeaders['Content-Length'] = String(payload.length);
      reqHeaders['Content-Type'] ??= 'application/json';
    }
    const req = http.request(
      { socketPath: resolveSocketPath(socketPath), method, path: `/${ENGINE_API_VERSION}${path}`, headers: reqHeaders },
      (res) => {
        /** @type {Buffer[]} */
        const chunks = [];
        res.on('data', (chunk) => chunks.push(chunk));
        res.on('error', reject);
        res.on('end', () => {
          const raw = Buffer.concat(chunks);
          const text = raw.toString('utf8');
          let parsed = null;
          try {
            parsed = text ? JSON.parse(text) : null;
          } catch {
            parsed = null;
          }
          resolve({ status: res.statusCode ?? 0, body: parsed, text, raw });
        });
      },
    );
    req.setTimeout(timeoutMs, () => req.destroy(new Error(`${method} ${path}: no answer within ${timeoutMs} ms`)));
    req.on('error', reject);
    if (isStream) body.pipe(req);
    else req.end(payload);
  });
}

/**
 * Throws unless `res.status` is one of `ok`.
 * @param {EngineResponse} res
 * @param {number[]} ok
 * @param {string} what
 */
function expectStatus(res, ok, what) {
  if (!ok.includes(res.status)) throw new Error(`${what}: HTTP ${res.status} ${res.text.slice(0, 500)}`);
  return res;
}

/**
 * `GET /_ping`: true when the engine answers.
 * @param {SocketOptions} [options]
 */
export async function ping({ socketPath } = {}) {
  try {
    return (await engineRequest('GET', '/_ping', { socketPath, timeoutMs: 5_000 })).status === 200;
  } catch {
    return false;
  }
}

/**
 * `POST /containers/create?name=...`: a container made by hand (no berth labels unless given).
 * @param {string | undefined} name
 * @param {Record<string, unknown>} spec The Engine API create body (`Image`, `Cmd`, `Labels`, ...).
 * @param {SocketOptions} [options]
 * @returns {Promise<string>} The container id.
 */
export async function createContainer(name, spec, { socketPath } = {}) {
  const query = name ? `?name=${encodeURIComponent(name)}` : '';
  const res = await engineRequest('POST', `/containers/create${query}`, { body: spec, socketPath });
  return expectStatus(res, [201], `create ${name ?? ''}`).body.Id;
}

/**
 * `POST /containers/{id}/start` (304, already running, counts as success).
 * @param {string} id
 * @param {SocketOptions} [options]
 */
export async function startContainer(id, { socketPath } = {}) {
  expectStatus(await engineRequest('POST', `/containers/${id}/start`, { socketPath }), [204, 304], `start ${id}`);
}

/**
 * `POST /containers/{id}/wait`: the exit code once it stops.
 * @param {string} id
 * @param {SocketOptions} [options]
 */
export async function waitContainer(id, { socketPath } = {}) {
  const res = expectStatus(await engineRequest('POST', `/containers/${id}/wait`, { socketPath }), [200], `wait ${id}`);
  return res.body.StatusCode;
}

/**
 * `GET /containers/{idOrName}/json`: the inspect body, or null on 404.
 * @param {string} idOrName
 * @param {SocketOptions} [options]
 */
export async function inspectContainer(idOrName, { socketPath } = {}) {
  const res = await engineRequest('GET', `/containers/${encodeURIComponent(idOrName)}/json`, { socketPath });
  if (res.status === 404) return null;
  return expectStatus(res, [200], `inspect ${idOrName}`).body;
}

/**
 * `GET /containers/json?all=1&filters=...`: containers in every state matching Engine API
 * `filters`, e.g. `{ label: ['berth.test-run=r1'] }` or `{ name: ['r1'] }` (see {@link labelFilter}).
 * @param {Record<string, string[]>} [filters]
 * @param {SocketOptions} [options]
 * @returns {Promise<any[]>}
 */
export async function listContainers(filters = {}, { socketPath } = {}) {
  const query = encodeURIComponent(JSON.stringify(filters));
  const res = await engineRequest('GET', `/containers/json?all=1&filters=${query}`, { socketPath });
  return expectStatus(res, [200], 'list containers').body;
}

/**
 * A `label` filter requiring all these labels: `{ key: value }` matches exactly, `{ key: null }` any value.
 * @param {Record<string, string | null>} labels
 */
export function labelFilter(labels) {
  return { label: Object.entries(labels).map(([k, v]) => (v == null ? k : `${k}=${v}`)) };
}

/**
 * `DELETE /containers/{id}?force=1&v=1`: true when removed, false when already gone.
 * @param {string} id
 * @param {SocketOptions} [options]
 */
export async function removeContainer(id, { socketPath } = {}) {
  const res = await engineRequest('DELETE', `/containers/${encodeURIComponent(id)}?force=1&v=1`, { socketPath });
  return expectStatus(res, [204, 404], `remove ${id}`).status === 204;
}

/**
 * `POST /containers/{id}/pause`.
 * @param {string} id
 * @param {SocketOptions} [options]
 */
export async function pauseContainer(id, { socketPath } = {}) {
  expectStatus(await engineRequest('POST', `/containers/${id}/pause`, { socketPath }), [204], `pause ${id}`);
}

/**
 * `POST /containers/{id}/unpause`.
 * @param {string} id
 * @param {SocketOptions} [options]
 */
export async function unpauseContainer(id, { socketPath } = {}) {
  expectStatus(await engineRequest('POST', `/containers/${id}/unpause`, { socketPath }), [204], `unpause ${id}`);
}

/**
 * `POST /containers/{id}/stop?t=0` (304, already stopped, counts as success).
 * @param {string} id
 * @param {SocketOptions} [options]
 */
export async function stopContainer(id, { socketPath } = {}) {
  expectStatus(await engineRequest('POST', `/containers/${id}/stop?t=0`, { socketPath }), [204, 304], `stop ${id}`);
}

/**
 * Runs `argv` in running container `id` through the raw exec API, outside berth:
 * `POST /containers/{id}/exec`, `POST /exec/{id}/start` (attached, no TTY), `GET /exec/{id}/json`.
 * @param {string} id
 * @param {string[]} argv
 * @param {SocketOptions & { user?: string }} [options]
 * @returns {Promise<{ exitCode: number, stdout: string, stderr: string }>}
 */
export async function execIn(id, argv, { socketPath, user } = {}) {
  const created = await engineRequest('POST', `/containers/${id}/exec`, {
    body: { AttachStdout: true, AttachStderr: true, Tty: false, Cmd: argv, ...(user ? { User: user } : {}) },
    socketPath,
  });
  const execId = expectStatus(created, [201], `exec in ${id}`).body.Id;
  const started = await engineRequest('POST', `/exec/${execId}/start`, { body: { Detach: false, Tty: false }, socketPath });
  const { stdout, stderr } = demux(expectStatus(started, [200], `start exec ${execId}`).raw);
  // The engine may still say Running for a moment after the streams closed: re-read briefly.
  for (let attempt = 0; ; attempt++) {
    const inspected = expectStatus(await engineRequest('GET', `/exec/${execId}/json`, { socketPath }), [200], `inspect exec ${execId}`);
    if (!inspected.body.Running && inspected.body.ExitCode != null) {
      return { exitCode: inspected.body.ExitCode, stdout: stdout.toString('utf8'), stderr: stderr.toString('utf8') };
    }
    if (attempt >= 100) throw new Error(`exec ${execId}: no exit code after its streams closed`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/**
 * `GET /volumes/{name}`: the volume, or null on 404.
 * @param {string} name
 * @param {SocketOptions} [options]
 */
export async function inspectVolume(name, { socketPath } = {}) {
  const res = await engineRequest('GET', `/volumes/${encodeURIComponent(name)}`, { socketPath });
  if (res.status === 404) return null;
  return expectStatus(res, [200], `inspect volume ${name}`).body;
}

/**
 * `GET /events?since=&until=&filters={"type":[type]}`: the engine's events of one type between
 * two times (seconds since the epoch), as `{ action, id }` (for a volume, its name).
 * Podman reports events only with `events_logger = "file"` (as `.ci/steps/15-podman.sh` sets it).
 * @param {{ type: string, since: number, until: number }} window
 * @param {SocketOptions} [options]
 * @returns {Promise<{ action: string, id: string }[]>}
 */
export async function engineEvents({ type, since, until }, { socketPath } = {}) {
  const q = new URLSearchParams({ since: String(since), until: String(until), filters: JSON.stringify({ type: [type] }) });
  const res = expectStatus(await engineRequest('GET', `/events?${q}`, { socketPath }), [200], `events of type ${type}`);
  return res.text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line))
    // Podman leaves a volume's `Actor.ID` empty and names it in `Actor.Attributes.name`.
    .map((e) => ({ action: e.Action ?? e.status, id: e.Actor?.ID || e.Actor?.Attributes?.name || e.id }));
}

/**
 * `GET /containers/{id}/logs`: stdout and stderr, demultiplexed (non-TTY containers).
 * @param {string} id
 * @param {SocketOptions} [options]
 */
export async function containerLogs(id, { socketPath } = {}) {
  const res = await engineRequest('GET', `/containers/${id}/logs?stdout=1&stderr=1`, { socketPath });
  return demux(expectStatus(res, [200], `logs ${id}`).raw);
}

/**
 * Splits the Engine API's framed stream (8-byte headers: stream type, 0, 0, 0, size BE32).
 * @param {Buffer} raw
 */
export function demux(raw) {
  /** @type {{ stdout: Buffer[], stderr: Buffer[] }} */
  const out = { stdout: [], stderr: [] };
  for (let at = 0; at + 8 <= raw.length; ) {
    const size = raw.readUInt32BE(at + 4);
    const frame = raw.subarray(at + 8, at + 8 + size);
    (raw[at] === 2 ? out.stderr : out.stdout).push(frame);
    at += 8 + size;
  }
  return { stdout: Buffer.concat(out.stdout), stderr: Buffer.concat(out.stderr) };
}

/**
 * Runs `argv` in a throwaway container of `image` and removes it: create, start, wait, logs, delete.
 * @param {string} image
 * @param {string[]} argv
 * @param {{ labels?: Record<string, string>, socketPath?: string }} [options]
 * @returns {Promise<{ exitCode: number, stdout: string, stderr: string }>}
 */
export async function runOnce(image, argv, { labels = {}, socketPath } = {}) {
  const id = await createContainer(undefined, { Image: image, Cmd: argv, Labels: labels }, { socketPath });
  try {
    await startContainer(id, { socketPath });
    const exitCode = await waitContainer(id, { socketPath });
    const { stdout, stderr } = await containerLogs(id, { socketPath });
    return { exitCode, stdout: stdout.toString('utf8'), stderr: stderr.toString('utf8') };
  } finally {
    await removeContainer(id, { socketPath });
  }
}

/**
 * Reads a JSON-lines progress stream (import, push, pull) and throws on an error item
 * (`errorDetail.message` or a bare `error`) or a non-200 status.
 * @param {{ status: number, text: string }} res
 * @param {string} what
 */
export function expectStreamOk(res, what) {
  const failure = res.text
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      try {
        return JSON.parse(line);
      } catch {
        return {};
      }
    })
    .find((item) => item.error || item.errorDetail);
  if (res.status !== 200 || failure) {
    throw new Error(`${what}: HTTP ${res.status} ${failure?.errorDetail?.message ?? failure?.error ?? res.text.slice(0, 500)}`);
  }
}
