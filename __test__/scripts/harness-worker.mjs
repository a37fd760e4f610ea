// One worker process of a multi-worker agent server, for parked.test.ts: the real HarnessAgent
// over berth's provider with the fake adapter (no model), driven over IPC by the test.
// Env: BERTH_WORKER_LABELS (JSON), BERTH_WORKER_SOCKET, BERTH_WORKER_SHORT_MS (the `short`
// agent's timeoutMs). Three agents: `long` (the provider's default lifetime), `short`
// (timeoutMs BERTH_WORKER_SHORT_MS) and `none` (no lifetime at all).
// Messages in: { id, op, args }; out: { ready, pid }, { id, ok: true, value } | { id, ok: false, error }.
// Ops run one at a time, in order (a worker serves its conversations in turn).
import { HarnessAgent } from '@ai-sdk/harness/agent';
import { createDockerSandboxProvider } from '../../harness.mjs';
import { createTestHarness } from '../helpers/test-harness.mjs';

const labels = JSON.parse(process.env.BERTH_WORKER_LABELS ?? '{}');
const socketPath = process.env.BERTH_WORKER_SOCKET || undefined;
const shortMs = Number(process.env.BERTH_WORKER_SHORT_MS ?? '10000');

/** @type {import('../helpers/test-harness.mjs').StartInfo | undefined} */
let started;
const harness = createTestHarness({ onStart: (info) => (started = info) });

/** @param {object} lifetime */
const agentWith = (lifetime) =>
  new HarnessAgent({
    harness,
    sandbox: createDockerSandboxProvider({ image: 'berth-test/busybox:1', workDir: '/workspace', labels, socketPath, ...lifetime }),
  });
/** @type {Record<string, HarnessAgent>} */
const agents = {
  long: agentWith({}),
  short: agentWith({ timeoutMs: shortMs }),
  none: agentWith({ timeoutMs: null, removeAfterStopMs: null }),
};

/** @type {Map<string, any>} */
const sessions = new Map();

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

/** @type {Record<string, (args: any) => Promise<unknown>>} */
const ops = {
  async create({ sessionId, agent = 'long' }) {
    started = undefined;
    sessions.set(sessionId, await agents[agent].createSession({ sessionId }));
    return { started };
  },
  async detach({ sessionId }) {
    const resumeFrom = await sessions.get(sessionId).detach();
    sessions.delete(sessionId);
    return { resumeFrom };
  },
  async resume({ sessionId, resumeFrom, agent = 'long' }) {
    started = undefined;
    sessions.set(sessionId, await agents[agent].createSession({ sessionId, resumeFrom }));
    return { started };
  },
  async destroy({ sessionId }) {
    await sessions.get(sessionId).destroy();
    sessions.delete(sessionId);
    return {};
  },
  /** Starts destroy() and exits 0 `delayMs` later, whatever destroy has done by then. */
  async destroyThenExit({ sessionId, delayMs }) {
    void sessions.get(sessionId).destroy().catch(() => {});
    setTimeout(() => process.exit(0), delayMs);
    return {};
  },
  async exit() {
    setImmediate(() => process.exit(0));
    return {};
  },
};

let queue = Promise.resolve();
process.on('message', (/** @type {any} */ message) => {
  queue = queue.then(async () => {
    try {
      const value = await ops[message.op](message.args ?? {});
      process.send?.({ id: message.id, ok: true, value });
    } catch (error) {
      process.send?.({ id: message.id, ok: false, error: serializeError(error) });
    }
  });
});
process.send?.({ ready: true, pid: process.pid });
