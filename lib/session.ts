import { withAbort } from './abort';
import type { NativeSession } from './binding';
import { callNative } from './native-call';
import type {
  ExecOptions,
  ExecResult,
  Owner,
  Ownership,
  ReleaseResult,
  RemoveOptions,
  RemoveResult,
  StopOptions,
  StopResult,
} from './types';
import {
  compact,
  expectOptionalNumber,
  expectOptionalBoolean,
  expectOptionalObject,
  expectOptionalSignal,
  expectOptionalString,
  expectOptionalStringRecord,
  expectPort,
  expectStringArray,
  invalid,
} from './validate';

/**
 * A handle on one session's container, from {@link createSession} or {@link resumeSession}.
 *
 * The handle knows how it came to hold the container (`ownership`). Only a `created` or
 * `inherited` handle removes or stops it; an `adopted` one leaves it alone unless `force`.
 * Removal is always by container id, never by name. `await using` removes it on scope exit.
 */
export class Session implements AsyncDisposable {
  readonly #native: NativeSession;

  /** @internal Made by createSession / resumeSession; not constructed by callers. */
  constructor(native: NativeSession) {
    this.#native = native;
  }

  /** The full 64-hex container id. */
  get id(): string {
    return this.#native.id;
  }

  /** The container name (see {@link containerName}). */
  get name(): string {
    return this.#native.name;
  }

  /** The session id this handle was made for. */
  get sessionId(): string {
    return this.#native.sessionId;
  }

  /** `created` (this handle made it), `adopted` (resumed), or `inherited` (took over from a dead owner). */
  get ownership(): Ownership {
    return this.#native.ownership as Ownership;
  }

  /** The container's recorded owner with its liveness when the handle was made; null if unknown. */
  get owner(): Owner | null {
    return (this.#native.owner ?? null) as Owner | null;
  }

  /** Create-spec fields that differ from the `spec` given to resumeSession (empty otherwise). */
  get drift(): string[] {
    return [...this.#native.drift];
  }

  /**
   * Runs `argv` in the container (no shell: pass `['sh', '-c', cmd]` for one) and buffers its
   * output. stdin, when given, is written then closed, so `cat` ends. Each of stdout and stderr
   * is capped at `maxBufferBytes`.
   *
   * Engine API: `POST /containers/{id}/exec`, `POST /exec/{id}/start`, `GET /exec/{id}/json`.
   *
   * @param argv Program and arguments, at least one string.
   * @param options `cwd`, `env`, `user`, `timeoutMs` (ms), `maxBufferBytes` (bytes), `stdin`, `abortSignal`.
   * @returns The exit code as the engine reports it, and the output bytes.
   * @throws InvalidArgumentError `E_INVALID_ARGUMENT` for a malformed argv or option, before any engine call.
   * @throws ExecTimeoutError `E_EXEC_TIMEOUT` past `timeoutMs`; the process tree was killed, `details.stdout`/`stderr` hold the output so far.
   * @throws AbortedError `E_ABORTED` when `abortSignal` fires; same cleanup and details.
   * @throws EngineError `E_ENGINE` when the engine refuses (e.g. the container is stopped).
   */
  async exec(argv: string[], options: ExecOptions = {}): Promise<ExecResult> {
    expectStringArray(argv, 'argv', 1);
    expectOptionalObject(options, 'options');
    const { cwd, env, user, timeoutMs, maxBufferBytes, stdin, abortSignal } = options;
    expectOptionalString(cwd, 'cwd');
    expectOptionalStringRecord(env, 'env');
    expectOptionalString(user, 'user');
    expectOptionalNumber(timeoutMs, 'timeoutMs', { min: 1 });
    expectOptionalNumber(maxBufferBytes, 'maxBufferBytes', { min: 0 });
    expectOptionalSignal(abortSignal, 'abortSignal');
    const native = compact({ cwd, env, user, timeoutMs, maxBufferBytes, stdin: toBuffer(stdin) });
    return callNative(() => withAbort(abortSignal, 'exec', (token) => this.#native.exec([...argv], native, token)));
  }

  /**
   * The host address a container port is published on, e.g. `"127.0.0.1:49153"` (for a
   * remote engine, the engine's host). Retried briefly while the engine fills the mapping.
   *
   * Engine API: `GET /containers/{id}/json`.
   *
   * @param port A container port the session was created with (1–65535).
   * @throws InvalidArgumentError `E_INVALID_ARGUMENT` for a port out of range or not published.
   */
  async hostAddress(port: number): Promise<string> {
    expectPort(port, 'port');
    return callNative(() => this.#native.hostAddress(port));
  }

  /**
   * Stops the container if this handle owns it (created or inherited), else resolves
   * `{ stopped: false, reason: 'not-owner' }` without an engine call unless `force`.
   *
   * Engine API: `POST /containers/{id}/stop?t=…`.
   *
   * @param options `force`, `timeoutMs` (grace period in ms before SIGKILL).
   */
  async stop(options: StopOptions = {}): Promise<StopResult> {
    expectOptionalObject(options, 'options');
    expectOptionalBoolean(options.force, 'force');
    expectOptionalNumber(options.timeoutMs, 'timeoutMs', { min: 0 });
    return callNative(() => this.#native.stop(compact({ force: options.force, timeoutMs: options.timeoutMs })));
  }

  /**
   * Removes the container, by id, with its anonymous volumes, if this handle owns it.
   *
   * Results: `{ removed: true }` for the call that removed it; `{ removed: false, reason: 'absent' }`
   * when the engine no longer had it; `{ removed: false, reason: 'already-removed' }` (no engine
   * call) for any later call; `{ removed: false, reason: 'not-owner' }` for an adopted handle
   * without `force`. Concurrent calls share one engine call. A failed removal rejects and keeps
   * the duty, so calling again retries.
   *
   * Engine API: `DELETE /containers/{id}?force=1&v=1`.
   *
   * @param options `force`: remove even when adopted.
   * @throws EngineError `E_ENGINE` / EngineUnavailableError `E_ENGINE_UNAVAILABLE` when removal fails (retry later).
   */
  async remove(options: RemoveOptions = {}): Promise<RemoveResult> {
    expectOptionalObject(options, 'options');
    expectOptionalBoolean(options.force, 'force');
    return callNative(() => this.#native.remove(compact({ force: options.force })));
  }

  /**
   * Drops this adopted handle's holder record, so that {@link reapOrphans} no longer counts
   * this process as holding the session. The container is never touched. An owner (created or
   * inherited) cannot release: its duty is to remove, so it resolves
   * `{ released: false, reason: 'owner' }`. Later calls resolve `'already-released'` without an
   * engine call. Without `release()`, an adopter's hold ends when its process exits.
   *
   * Engine API: `DELETE /volumes/{this handle's holder record}`.
   *
   * @throws EngineError `E_ENGINE` / EngineUnavailableError `E_ENGINE_UNAVAILABLE` (the record is kept; retry).
   */
  async release(): Promise<ReleaseResult> {
    return callNative(() => this.#native.release()) as Promise<ReleaseResult>;
  }

  /** Same as {@link Session.remove} without options, for `await using session = ...`. */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.remove();
  }
}

function toBuffer(stdin: unknown): Buffer | undefined {
  if (stdin === undefined) return undefined;
  if (typeof stdin === 'string') return Buffer.from(stdin, 'utf8');
  if (stdin instanceof Uint8Array) return Buffer.from(stdin.buffer, stdin.byteOffset, stdin.byteLength);
  return invalid('stdin', 'expected a Uint8Array or a string');
}
