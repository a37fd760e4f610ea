// "The same requests berth makes": berth's own request sequences, recorded through a proxy in
// this run, then replayed on a raw connection with the ids and names of new objects put in.
// Label keys `dev.berth.*` become `bench.berth.*` and record volumes `berth-*` become
// `bench-*`, so the raw contender's containers carry the same bytes but are never mistaken
// for berth-managed ones (by a reaper, say).
import * as berth from '../../index.mjs';
import { startRecordingProxy } from './recording-proxy.mjs';
import { overEngine } from './engine-path.mjs';

const RENAMES = [
  ['dev.berth.', 'bench.berth.'],
  ['berth-ready-', 'bench-ready-'],
  ['berth-holder-', 'bench-holder-'],
  ['berth-duty-', 'bench-duty-'],
];

/**
 * Records the requests of one berth create (to ready), one peek, one exec of `true` and one remove.
 * @returns {Promise<{ create: any[], peek: any[], exec: any[], remove: any[], containerId: string, name: string, sessionId: string }>}
 */
export async function recordBerthRequests({ socketPath, image, labels, sessionId }) {
  const proxy = await startRecordingProxy(socketPath);
  try {
    // Connect (GET /version) outside the recorded create: berth caches the engine per process.
    await berth.peek(sessionId, { socketPath: proxy.socketPath });
    proxy.take();
    const session = await berth.createSession({ sessionId, image, labels, socketPath: proxy.socketPath });
    const create = proxy.take();
    await berth.peek(sessionId, { socketPath: proxy.socketPath });
    const peek = proxy.take();
    await overEngine(() => session.exec(['true'])); // the engine exec, not the command channel
    const exec = proxy.take();
    await session.remove();
    await new Promise((r) => setTimeout(r, 20));
    const remove = proxy.take();
    return { create, peek, exec, remove, containerId: session.id, name: session.name, sessionId };
  } finally {
    await proxy.close();
  }
}

/** `METHOD /path` lines with 64-hex ids shortened, for the report. */
export function describe(recorded) {
  return recorded.map((r) => `${r.method} ${r.path.replace(/[0-9a-f]{64}/g, '{id}').replace(/\?.*$/, '')}`);
}

/**
 * A replayer of recorded sequences on `raw` (a raw-engine client).
 * @param {ReturnType<typeof import('./raw-engine.mjs').rawEngine>} raw
 * @param {Awaited<ReturnType<typeof recordBerthRequests>>} rec
 */
export function replayer(raw, rec) {
  const oldExecId = rec.exec.map((r) => /^\/exec\/([0-9a-f]{64})\/start/.exec(r.path)?.[1]).find(Boolean);

  const apply = (text, subst, rename) => {
    let out = text;
    for (const [from, to] of subst) out = out.split(from).join(to);
    if (rename) for (const [from, to] of RENAMES) out = out.split(from).join(to);
    return out;
  };

  async function play(recorded, subst, rename = true) {
    // An unnamed create (the network guard's helper container, docs/network.md): its recorded id
    // is the first unknown container id a later request names; it maps to the replayed one.
    let unnamed = null;
    for (const r of recorded) {
      if (unnamed) {
        const seen = /^\/containers\/([0-9a-f]{64})\//.exec(r.path)?.[1];
        if (seen && seen !== rec.containerId && !subst.has(seen)) {
          subst.set(seen, unnamed);
          unnamed = null;
        }
      }
      const path = apply(r.path, subst, rename);
      const body = r.body === undefined ? undefined : JSON.parse(apply(JSON.stringify(r.body), subst, rename));
      const start = /^\/exec\/([0-9a-f]{64})\/start/.exec(path);
      if (start) {
        await raw.startExecAttached(start[1]);
        continue;
      }
      const res = await raw.request(r.method, path, body);
      if (res.status >= 300 && !(r.method === 'DELETE' && res.status === 404)) {
        throw new Error(`raw replay ${r.method} ${path}: HTTP ${res.status} ${JSON.stringify(res.body)}`);
      }
      if (r.method === 'POST' && /^\/containers\/create\?(.*&)?name=/.test(r.path)) subst.set(rec.containerId, res.body.Id);
      else if (r.method === 'POST' && /^\/containers\/create/.test(r.path)) unnamed = res.body.Id;
      if (r.method === 'POST' && /^\/containers\/[0-9a-f]{64}\/exec$/.test(r.path) && oldExecId) {
        subst.set(oldExecId, res.body.Id);
      }
    }
  }

  return {
    /** Replays the create for a new session id; resolves the substitutions (old → new). */
    async create(sessionId) {
      const name = rec.name.replace(rec.sessionId, sessionId);
      const subst = new Map([[rec.name, name], [rec.sessionId, sessionId]]);
      await play(rec.create, subst);
      return { id: subst.get(rec.containerId), subst };
    },
    /** Replays the peek (reads only) of berth's own session `session` (names kept as berth's). */
    async peek(session) {
      await play(rec.peek, new Map([[rec.containerId, session.id], [rec.name, session.name]]), false);
    },
    /** Replays the exec of `true` in the container `id`. */
    async exec(id) {
      await play(rec.exec, new Map([[rec.containerId, id]]));
    },
    /** Replays the remove of a container made by `create` (its record volumes too). */
    async remove(made) {
      await play(rec.remove, made.subst);
    },
  };
}
