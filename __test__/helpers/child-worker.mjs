// A second OS process for cross-process tests, driven over IPC by child.ts. It imports the
// package root as a user would. Messages in: { id, op, args, gated? } and { go: true };
// out: { ready, pid }, { id, armed: true }, { id, ok: true, value } | { id, ok: false, error }.
import * as berth from '../../index.mjs';
import * as dropIn from '../../container.mjs';

/** @type {Map<string, berth.Session>} */
const sessions = new Map();
/** @type {Map<string, import('../../container.mjs').ContainerHandle>} */
const handles = new Map();
let nextHandle = 0;
/** @type {(() => void)[]} */
let waitingForGo = [];

/** @param {Record<string, unknown>} message */
function send(message) {
  process.send?.(message);
}

/**
 * @param {unknown} error
 * @returns {{ name?: string, code?: string, message: string, details?: unknown, cause?: unknown }}
 */
function serializeError(error) {
  if (!(error instanceof Error)) return { message: String(error) };
  const e = /** @type {any} */ (error);
  return {
    name: e.name,
    code: typeof e.code === 'string' ? e.code : undefined,
    message: e.message,
    details: e.details,
    cause: e.cause === undefined ? undefined : serializeError(e.cause),
  };
}

/**
 * @param {string} handle
 * @param {berth.Session} session
 */
function describeSession(handle, session) {
  return {
    handle,
    id: session.id,
    name: session.name,
    sessionId: session.sessionId,
    ownership: session.ownership,
    owner: session.owner,
    drift: session.drift,
  };
}

/** @param {berth.Session} session */
function keep(session) {
  const handle = `h${++nextHandle}`;
  sessions.set(handle, session);
  return describeSession(handle, session);
}

/** @param {string} handle */
function held(handle) {
  const session = sessions.get(handle);
  if (!session) throw new Error(`child ${process.pid}: no session handle ${handle}`);
  return session;
}

/** @type {Record<string, (...args: any[]) => Promise<unknown> | unknown>} */
const ops = {
  createSession: async (options) => keep(await berth.createSession(options)),
  resumeSession: async (options) => keep(await berth.resumeSession(options)),
  recreateSession: async (options) => keep(await berth.recreateSession(options)),
  verifySession: (sessionId, options) => berth.verifySession(sessionId, options),
  exec: (handle, argv, options) => held(handle).exec(argv, options),
  remove: (handle, options) => held(handle).remove(options),
  release: (handle) => held(handle).release(),
  stop: (handle, options) => held(handle).stop(options),
  hostAddress: (handle, port) => held(handle).hostAddress(port),
  peek: (sessionId, options) => berth.peek(sessionId, options),
  listSessions: (options) => berth.listSessions(options),
  reapOrphans: (options) => berth.reapOrphans(options),
  containerName: (sessionId, prefix) => berth.containerName(sessionId, prefix),
  hold: (handle) => describeSession(handle, held(handle)),
  containerHandle: async (sandboxId, options) => {
    const h = dropIn.createContainerHandle(sandboxId, options);
    await h.ready();
    const handle = `c${++nextHandle}`;
    handles.set(handle, h);
    return { handle, name: h.name, id: h.id, ownership: h.ownership };
  },
  containerRemove: (handle) => {
    const h = handles.get(handle);
    if (!h) throw new Error(`child ${process.pid}: no container handle ${handle}`);
    return h.remove();
  },
  pid: () => process.pid,
  exit: (code = 0) => {
    setImmediate(() => process.exit(code));
    return null;
  },
};

/** @param {any} message */
async function handle(message) {
  if (message?.go) {
    const waiting = waitingForGo;
    waitingForGo = [];
    for (const release of waiting) release();
    return;
  }
  const { id, op, args = [], gated = false } = message;
  try {
    const fn = ops[op];
    if (!fn) throw new Error(`child: unknown op ${op}`);
    if (gated) {
      /** @type {Promise<void>} */
      const go = new Promise((resolve) => waitingForGo.push(() => resolve()));
      send({ id, armed: true });
      await go;
    }
    send({ id, ok: true, value: await fn(...args) });
  } catch (error) {
    send({ id, ok: false, error: serializeError(error) });
  }
}

process.on('message', (message) => void handle(message));
// The parent went away: leave like a crashed owner would (no cleanup).
process.on('disconnect', () => process.exit(0));
send({ ready: true, pid: process.pid });
