import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const WORKER = fileURLToPath(new URL('./child-worker.mjs', import.meta.url));
const READY_TIMEOUT_MS = 30_000;

/** An error reported by the child, rebuilt in the parent with the same code and details. */
export class ChildCallError extends Error {
  readonly code: string | undefined;
  readonly details: Record<string, unknown> | undefined;
  override readonly cause: unknown;
  constructor(op: string, error: SerializedError) {
    super(`child ${op}: ${error.message}`);
    this.name = error.name ?? 'ChildCallError';
    this.code = error.code;
    this.details = error.details === undefined ? undefined : toBuffers(error.details);
    this.cause = error.cause;
  }
}

/** An error as the worker serialises it. */
export interface SerializedError {
  name?: string;
  code?: string;
  message: string;
  details?: Record<string, unknown>;
  cause?: SerializedError;
}

/** What the worker answers for a session it keeps. */
export interface ChildSession {
  handle: string;
  id: string;
  name: string;
  sessionId: string;
  ownership: 'created' | 'adopted' | 'inherited';
  owner: Record<string, unknown> | null;
  drift: string[];
}

/** The worker's ops and their arguments (see child-worker.mjs). */
export interface ChildOps {
  createSession: [options: Record<string, unknown>];
  resumeSession: [options: Record<string, unknown>];
  recreateSession: [options: Record<string, unknown>];
  verifySession: [sessionId: string, options?: Record<string, unknown>];
  exec: [handle: string, argv: string[], options?: Record<string, unknown>];
  remove: [handle: string, options?: { force?: boolean }];
  release: [handle: string];
  stop: [handle: string, options?: { force?: boolean; timeoutMs?: number }];
  hostAddress: [handle: string, port: number];
  peek: [sessionId: string, options?: Record<string, unknown>];
  listSessions: [options?: Record<string, unknown>];
  reapOrphans: [options?: Record<string, unknown>];
  containerName: [sessionId: string, prefix?: string];
  hold: [handle: string];
  containerHandle: [sandboxId: string, options: Record<string, unknown>];
  containerRemove: [handle: string];
  pid: [];
  exit: [code?: number];
}

type Reply = { id: number; ok: boolean; value?: unknown; error?: SerializedError; armed?: boolean };

/** A second OS process running the package, driven over IPC. */
export interface Child {
  /** The child's pid. */
  readonly pid: number;
  /** Runs `op` in the child; resolves its value or rejects with a {@link ChildCallError}. */
  call<K extends keyof ChildOps>(op: K, ...args: ChildOps[K]): Promise<any>;
  /**
   * Prepares `op` but holds it until {@link Child.go}: `armed` resolves once the child is
   * waiting, `result` is the call's outcome. For N processes starting one call together.
   */
  prepare<K extends keyof ChildOps>(op: K, ...args: ChildOps[K]): { armed: Promise<void>; result: Promise<any> };
  /** Releases every prepared call. */
  go(): void;
  /** Sends `signal` (default SIGKILL) and waits for the process to end. */
  kill(signal?: NodeJS.Signals): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Asks the child to exit normally (no cleanup of its sessions) and waits for it. */
  exit(): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

const live = new Set<ChildProcess>();

/**
 * Forks `child-worker.mjs` (which imports the package root `index.mjs`, so run `npm run build`
 * first) and waits until it is ready. Safe to call N times concurrently.
 *
 * @param options.env Extra environment for the child (it inherits `BERTH_TEST_RUN`).
 */
export async function startChild(options: { env?: Record<string, string> } = {}): Promise<Child> {
  const proc = fork(WORKER, [], {
    env: { ...process.env, ...options.env },
    serialization: 'advanced',
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  live.add(proc);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    proc.once('exit', (code, signal) => {
      live.delete(proc);
      resolve({ code, signal });
    }),
  );
  const pending = new Map<number, { resolve: (r: Reply) => void; armed?: () => void }>();
  let nextId = 0;
  proc.on('message', (reply: Reply) => {
    const waiter = pending.get(reply.id);
    if (!waiter) return;
    if (reply.armed) return waiter.armed?.();
    pending.delete(reply.id);
    waiter.resolve(reply);
  });
  void exited.then(({ code, signal }) => {
    for (const [id, waiter] of pending) {
      waiter.resolve({ id, ok: false, error: { message: `child exited (code ${code}, signal ${signal})` } });
    }
    pending.clear();
  });
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('child worker not ready in time')), READY_TIMEOUT_MS);
    const onMessage = (message: { ready?: boolean }): void => {
      if (!message?.ready) return;
      clearTimeout(timer);
      proc.off('message', onMessage);
      resolve();
    };
    proc.on('message', onMessage);
    void exited.then(({ code, signal }) => {
      clearTimeout(timer);
      reject(new Error(`child worker exited before ready (code ${code}, signal ${signal})`));
    });
  });

  const send = (op: string, args: unknown[], gated: boolean): { armed: Promise<void>; result: Promise<any> } => {
    const id = ++nextId;
    let armed!: () => void;
    const armedPromise = new Promise<void>((resolve) => (armed = resolve));
    const reply = new Promise<Reply>((resolve) => pending.set(id, { resolve, armed }));
    proc.send({ id, op, args, gated });
    const result = reply.then((r) => {
      if (!r.ok) throw new ChildCallError(op, r.error ?? { message: 'unknown failure' });
      return toBuffers(r.value);
    });
    return { armed: gated ? armedPromise : Promise.resolve(), result };
  };

  return {
    pid: proc.pid!,
    call: (op, ...args) => send(op, args, false).result,
    prepare: (op, ...args) => send(op, args, true),
    go: () => void proc.send({ go: true }),
    kill: async (signal = 'SIGKILL') => {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill(signal);
      return exited;
    },
    exit: async () => {
      if (proc.exitCode === null && proc.signalCode === null) proc.send({ id: ++nextId, op: 'exit', args: [] });
      return exited;
    },
  };
}

/** Starts `n` children at once. */
export function startChildren(n: number, options?: { env?: Record<string, string> }): Promise<Child[]> {
  return Promise.all(Array.from({ length: n }, () => startChild(options)));
}

/**
 * Runs the same call in every child at the same moment: arms all, waits until each is
 * waiting, then releases them together. Resolves to each call's settled outcome.
 */
export async function callTogether<K extends keyof ChildOps>(
  children: Child[],
  op: K,
  ...args: ChildOps[K]
): Promise<PromiseSettledResult<any>[]> {
  const prepared = children.map((child) => child.prepare(op, ...args));
  await Promise.all(prepared.map((p) => p.armed));
  for (const child of children) child.go();
  return Promise.allSettled(prepared.map((p) => p.result));
}

/** SIGKILLs every child still running (for `afterEach` / `afterAll`). */
export async function killAllChildren(): Promise<void> {
  await Promise.all(
    [...live].map(
      (proc) =>
        new Promise<void>((resolve) => {
          if (proc.exitCode !== null || proc.signalCode !== null) return resolve();
          proc.once('exit', () => resolve());
          proc.kill('SIGKILL');
        }),
    ),
  );
}

/** Structured clone turns Buffers into Uint8Arrays; give the test Buffers back. */
function toBuffers<T>(value: T): T {
  if (value instanceof Uint8Array) return Buffer.from(value.buffer, value.byteOffset, value.byteLength) as T;
  if (Array.isArray(value)) return value.map(toBuffers) as T;
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, toBuffers(v)])) as T;
  }
  return value;
}
