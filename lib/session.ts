import { constants as bufferConstants } from 'node:buffer';
import { withAbort } from './abort';
import { loadBinding, type NativeCancelToken, type NativeSession } from './binding';
import { AbortedError } from './errors/aborted-error';
import { ExecProcess } from './exec-process';
import { expectByteSource, fileStream, pipeToWriter, type ByteSource } from './file-stream';
import { metricsOf } from './metrics';
import { callNative, callNativeSync } from './native-call';
import type {
  CallOptions,
  ExecOptions,
  ReadFileOptions,
  SpawnOptions,
  WriteFileOptions,
  ExecResult,
  ExecTextResult,
  Finding,
  MetricsOptions,
  SessionMetrics,
  NetworkPolicy,
  Owner,
  Replaced,
  ReplacedItem,
  Verification,
  Ownership,
  FileAccess,
  ReleaseResult,
  RemoveOptions,
  RemoveResult,
  StopOptions,
  StopResult,
} from './types';
import {
  CALL_OPTION_KEYS,
  EXEC_OPTION_KEYS,
  METRICS_OPTION_KEYS,
  NETWORK_POLICY_KEYS,
  READ_FILE_OPTION_KEYS,
  REMOVE_OPTION_KEYS,
  SPAWN_OPTION_KEYS,
  STOP_OPTION_KEYS,
  WRITE_FILE_OPTION_KEYS,
} from './types';
import {
  compact,
  expectOptionalNumber,
  expectOptionalBoolean,
  expectOptionalOptions,
  expectOptions,
  expectOptionalSignal,
  expectOptionalString,
  expectOptionalStringRecord,
  expectPort,
  expectString,
  expectStringArray,
  invalid,
} from './validate';

/** Node's largest `Buffer`, in bytes: the highest cap a buffered result may have. */
const MAX_LENGTH = bufferConstants.MAX_LENGTH;

/**
 * A handle on one session's container, from {@link createSession} or {@link resumeSession}.
 *
 * The handle knows how it came to hold the container (`ownership`). Only a `created` or
 * `inherited` handle removes or stops it; an `adopted` one leaves it alone unless `force`.
 * The duty belongs to the process: every handle this process gets on a container it created
 * (or inherited) shares one removal state, so removals through any of them make one engine call.
 * Removal is always by container id, never by name. `await using` removes it on scope exit.
 */
export class Session implements AsyncDisposable {
  readonly #native: NativeSession;
  #expiresAt: number | null;

  /** @internal Made by createSession / resumeSession; not constructed by callers. */
  constructor(native: NativeSession, files: FileAccess = 'user') {
    this.#native = native;
    if (files !== 'user') native.setFileAccess(files);
    this.#expiresAt = native.expiresAt ?? null;
  }

  /**
   * When the session expires, in milliseconds since the epoch (its deadline from `timeoutMs`
   * or {@link Session.setTimeout}, or, while stopped, its stop plus `removeAfterStopMs`); null
   * when it never expires. Read when the handle was made and updated by this handle's
   * `setTimeout`; {@link peek} reads the engine's current value.
   */
  get expiresAt(): number | null {
    return this.#expiresAt;
  }

  /**
   * Moves the session's deadline to now + `ms` milliseconds, as e2b's `setTimeout` does: an
   * extension (or a shortening) of a live session. Owner or inheritor only. The new deadline is
   * recorded in the engine (every berth process honours it), written into the container for
   * its deadline keep-alive, and this process's timer is re-armed. See docs/lifetimes.md "Lifetimes".
   *
   * Engine API: `GET /containers/{id}/json`, `GET /volumes?filters=...`, one command as root (the
   * deadline file, when the container runs berth's deadline keep-alive: over the session's
   * command channel when the container's user is root, else one exec as user 0),
   * `POST /volumes/create`.
   *
   * @param ms Milliseconds from now, a whole number from 0 to 2,592,000,000 (30 days).
   * @returns The new deadline, in milliseconds since the epoch.
   * @throws InvalidArgumentError `E_INVALID_ARGUMENT` (negative, fractional, NaN, over 30 days or
   *   not a number), before any engine call.
   * @throws SessionBusyError `E_SESSION_BUSY` (`reason: 'not-owner'`) on an adopted handle.
   * @throws SessionNotFoundError `E_SESSION_NOT_FOUND` once removed (`details.reason: 'expired'`
   *   when it was past its deadline: an extension never revives an expired session).
   * @throws AbortedError `E_ABORTED` when `abortSignal` fires (the full list: the core's
   *   `Session::set_timeout` doc, crates/berth-core/src/session/timeout.rs).
   */
  async setTimeout(ms: number, options: CallOptions = {}): Promise<number> {
    if (ms === undefined) expectOptionalNumber(null, 'ms');
    expectOptionalNumber(ms, 'ms'); // its range (0 to 30 days) is the core's
    expectOptionalOptions(options, 'options', CALL_OPTION_KEYS);
    const signal = options.abortSignal;
    expectOptionalSignal(signal, 'abortSignal');
    const deadline = await callNative(() => withAbort(signal, 'setTimeout', (token) => this.#native.setTimeout(ms, token)));
    this.#expiresAt = deadline;
    return deadline;
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

  /** The verification `resumeSession({ verify: true })` or {@link recreateSession} ran; null otherwise. */
  get verification(): Verification | null {
    const v = this.#native.verification;
    return v ? { ...v, findings: v.findings.map(finding) } : null;
  }

  /** For a handle from {@link recreateSession}: what the recreation lost and kept; null otherwise. */
  get replaced(): Replaced | null {
    const r = this.#native.replaced;
    return r ? { previousId: r.previousId, lost: r.lost.map(item), kept: r.kept.map(item) } : null;
  }

  /**
   * Runs `argv` in the container (no shell: pass `['sh', '-c', cmd]` for one) and buffers its
   * output. stdin, when given, is written then closed, so `cat` ends. What is kept of stdout and
   * stderr together is capped at `maxBufferBytes`, and by the process-wide budget of buffered
   * output ({@link setBufferBudget}); past either, output is dropped and `truncated` set.
   *
   * Engine API: none per command over the session's command channel (the helper is copied in
   * with `PUT /containers/{id}/archive` and started as one exec per user on first use, see
   * docs/design.md#exec); otherwise `POST /containers/{id}/exec`, `POST /exec/{id}/start`,
   * `GET /exec/{id}/json`. `BERTH_COMMAND_CHANNEL=0` in the environment forces the latter.
   *
   * @param argv Program and arguments, at least one string.
   * @param options `cwd`, `env`, `user`, `timeoutMs` (ms), `maxBufferBytes` (bytes), `stdin`, `abortSignal`.
   * @returns The exit code as the engine reports it, and the output bytes.
   * @throws {BerthError} with a code listed in the core's `Session::exec` doc
   *   (crates/berth-core/src/session.rs); each code's class and `details`: docs/errors.md.
   *   A timeout or abort kills the process tree first (docs/design.md#exec).
   */
  async exec(argv: string[], options: ExecOptions = {}): Promise<ExecResult> {
    const native = this.#execOptions(argv, options);
    return callNative(() =>
      withAbort(options.abortSignal, 'exec', (token) => this.#native.exec([...argv], native, token)),
    );
  }

  /**
   * {@link Session.exec}, with stdout and stderr answered as UTF-8 text (malformed sequences as
   * U+FFFD, a leading BOM kept, as `TextDecoder` with `ignoreBOM`). The bytes are decoded as
   * they cross into JavaScript and freed at once, so the bytes and the text are never held
   * together past that one copy (decoding a `Buffer` result keeps both until a garbage
   * collection). `maxBufferBytes` counts the output's bytes; the text takes 1 byte per
   * character when it is all Latin-1, else 2 (V8's two-byte strings: output that is not
   * UTF-8, where each malformed byte becomes a U+FFFD, takes up to twice its bytes).
   *
   * Engine API, options and errors: those of {@link Session.exec}.
   */
  async execText(argv: string[], options: ExecOptions = {}): Promise<ExecTextResult> {
    const native = this.#execOptions(argv, options);
    return callNative(() =>
      withAbort(options.abortSignal, 'exec', (token) => this.#native.execText([...argv], native, token)),
    );
  }

  /** The checked native options of `exec`/`execText`; `E_INVALID_ARGUMENT` before any engine call. */
  #execOptions(argv: string[], options: ExecOptions): Parameters<NativeSession['exec']>[1] {
    expectStringArray(argv, 'argv', 1);
    expectOptionalOptions(options, 'options', EXEC_OPTION_KEYS);
    const { cwd, env, user, timeoutMs, maxBufferBytes, stdin, abortSignal } = options;
    expectOptionalString(cwd, 'cwd');
    expectOptionalStringRecord(env, 'env');
    expectOptionalString(user, 'user');
    expectOptionalNumber(timeoutMs, 'timeoutMs');
    // A Buffer's maximum length is JavaScript's own bound; the rest of each range is the core's.
    expectOptionalNumber(maxBufferBytes, 'maxBufferBytes', { max: MAX_LENGTH });
    expectOptionalSignal(abortSignal, 'abortSignal');
    return compact({ cwd, env, user, timeoutMs, maxBufferBytes, stdin: toBuffer(stdin) });
  }

  /**
   * Starts `argv` in the container and returns at once with its output as web streams (the
   * AI SDK's `SandboxProcess` shape): `stdout`/`stderr` deliver chunks as the process writes
   * them, with back-pressure; `wait()` gives the exit code; `kill()` ends the process tree.
   *
   * Engine API: none per command over the session's command channel (the helper is copied in
   * with `PUT /containers/{id}/archive` and started as one exec per user on first use, see
   * docs/design.md#exec); otherwise `POST /containers/{id}/exec`, `POST /exec/{id}/start`,
   * `GET /exec/{id}/json`. `BERTH_COMMAND_CHANNEL=0` in the environment forces the latter.
   *
   * @param argv Program and arguments (no shell: pass `['sh', '-c', cmd]` for one).
   * @param options `cwd`, `env`, `user`, `stdin` (written, then closed), `timeoutMs` (ms), `abortSignal`.
   * @throws {BerthError} with a code listed in the core's `Session::spawn` doc
   *   (crates/berth-core/src/session.rs); each code's class and `details`: docs/errors.md.
   *   Aborts and timeouts after the start reject `wait()` and error both streams instead.
   * @example
   * ```ts
   * const p = await session.spawn(['sh', '-c', 'npm test']);
   * for await (const chunk of p.stdout) process.stdout.write(chunk);
   * const { exitCode } = await p.wait();
   * ```
   */
  async spawn(argv: string[], options: SpawnOptions = {}): Promise<ExecProcess> {
    expectStringArray(argv, 'argv', 1);
    expectOptionalOptions(options, 'options', SPAWN_OPTION_KEYS);
    const { cwd, env, user, timeoutMs, stdin, abortSignal } = options;
    expectOptionalString(cwd, 'cwd');
    expectOptionalStringRecord(env, 'env');
    expectOptionalString(user, 'user');
    expectOptionalNumber(timeoutMs, 'timeoutMs');
    expectOptionalSignal(abortSignal, 'abortSignal');
    const native = compact({ cwd, env, user, timeoutMs, stdin: toBuffer(stdin) });
    const { token, detach } = attachSignal(abortSignal, 'spawn');
    try {
      const proc = new ExecProcess(await callNative(() => this.#native.spawn([...argv], native, token)), detach);
      // With a signal, watch for the end so the listener is removed then.
      if (abortSignal) proc.wait().catch(() => {});
      return proc;
    } catch (error) {
      detach();
      throw error;
    }
  }

  /**
   * Reads a whole file from the container, as the session's user (`files: 'user'`, the
   * default: what that user may not read is `E_PERMISSION_DENIED`). Symbolic links are followed.
   *
   * Engine API: files up to 1 MiB are read over the session's file channel when the image can
   * run it: one exec of `sh` as the user, opened on the first file call
   * (`POST /containers/{id}/exec`, `POST /exec/{id}/start`), that carries every later small
   * read and write. Otherwise a non-root user's read is an exec of `sh` (`cat`) as that user;
   * root's (or `files: 'engine'`) is `GET /containers/{id}/archive?path=` (an exec of `cat`
   * for paths on tmpfs mounts).
   *
   * The file is opened once and read through that descriptor, so the bytes are those of the
   * file that was checked (a path swapped for a link to `/dev/zero` meanwhile changes nothing).
   *
   * @param path Absolute path in the container, without a trailing `/`.
   * @returns The bytes, or `null` when nothing is at `path`.
   * @param options `maxBytes` (bytes, default 64 MiB): a larger file is `E_FILE_TOO_LARGE` and
   *   the read stops at the cap; `abortSignal`: aborts the read at once, whatever the engine does.
   * @throws {BerthError} with a code listed in the core's `Session::read_file` doc
   *   (`E_INVALID_ARGUMENT`, `E_PERMISSION_DENIED`, `E_FILE_TOO_LARGE`, `E_SESSION_NOT_FOUND`, `E_ABORTED`, ...).
   */
  async readFile(path: string, options: ReadFileOptions = {}): Promise<Buffer | null> {
    expectString(path, 'path');
    expectOptionalOptions(options, 'options', READ_FILE_OPTION_KEYS);
    expectOptionalNumber(options.maxBytes, 'maxBytes', { max: MAX_LENGTH }); // a Buffer's own bound
    expectOptionalSignal(options.abortSignal, 'abortSignal');
    const { maxBytes } = options;
    return callNative(() =>
      withAbort(options.abortSignal, 'readFile', (token) => this.#native.readFile(path, maxBytes, token)),
    );
  }

  /**
   * Opens a file for streaming: a web `ReadableStream` read in 64 KiB chunks as it is pulled,
   * so a large file is never held in memory. Read it to the end or `cancel()` it: while a
   * download is open, Docker holds the container's lock and other calls on the container
   * (files, inspect, exec) wait for it.
   *
   * Engine API and errors as {@link Session.readFile}. The stream never delivers more than
   * the size the file had when it was opened, nor more than `maxBytes` when given (no cap by
   * default): past it the stream errors with `E_FILE_TOO_LARGE` (at once when the size is
   * known up front) and the read stops.
   *
   * @returns The stream, or `null` when nothing is at `path`.
   */
  async openFile(path: string, options: ReadFileOptions = {}): Promise<ReadableStream<Uint8Array> | null> {
    expectString(path, 'path');
    expectOptionalOptions(options, 'options', READ_FILE_OPTION_KEYS);
    const { abortSignal, maxBytes } = options;
    expectOptionalNumber(maxBytes, 'maxBytes', { max: MAX_LENGTH }); // a Buffer's own bound
    expectOptionalSignal(abortSignal, 'abortSignal');
    const reader = await callNative(() =>
      withAbort(abortSignal, 'openFile', (token) => this.#native.openFile(path, maxBytes, token)),
    );
    if (reader === null) return null;
    if (!abortSignal) return fileStream(reader);
    const onAbort = (): void => reader.cancel();
    abortSignal.addEventListener('abort', onAbort, { once: true });
    return fileStream(reader, () => abortSignal.removeEventListener('abort', onAbort));
  }

  /**
   * Writes a file atomically, as the session's user (`files: 'user'`, the default: where that
   * user may not write is `E_PERMISSION_DENIED` and nothing changes). The data goes to
   * `.berth-tmp-<16 hex>` beside the file and is renamed over it, so an abort or a failure
   * leaves the old file or the new one, never a mix, and no temporary file. A new file is the
   * user's with `mode` (default 0o644); an existing file keeps its owner, and its mode unless
   * `mode` is given; setuid/setgid/sticky bits need a root session (or `files: 'engine'`).
   * Missing parent directories are created (mode 0755, owned by the user); existing ones are
   * left exactly as they are. A symbolic link is written through. Every path checks what it
   * wrote before the rename: on a full filesystem the call rejects with `E_NO_SPACE`
   * (`details.errno: 'ENOSPC'`), the temporary file is removed and the old file is intact.
   *
   * Engine API: up to 16 KiB over the session's file channel (see {@link Session.readFile});
   * otherwise, for a non-root user, an exec of `sh` as that user with the data on stdin; for
   * root (or `files: 'engine'`) `HEAD /containers/{id}/archive?path=`,
   * `PUT /containers/{id}/archive?path=/` and one exec of `sh` as user 0 for the rename (an
   * exec of `sh` as user 0 with the data on stdin on tmpfs mounts and read-only roots).
   *
   * @param path Absolute path in the container, without a trailing `/`.
   * @param data Bytes, or a string written as UTF-8.
   * @throws {BerthError} with a code listed in the core's `Session::write_file` doc
   *   (`E_INVALID_ARGUMENT`, `E_PERMISSION_DENIED`, `E_NO_SPACE`, `E_SESSION_NOT_FOUND`,
   *   `E_ABORTED`, ...).
   */
  async writeFile(path: string, data: Uint8Array | string, options: WriteFileOptions = {}): Promise<void> {
    expectString(path, 'path');
    const bytes = toBuffer(data, 'data');
    if (bytes === undefined) invalid('data', 'expected a Uint8Array or a string');
    const { mode, abortSignal } = checkWriteOptions(options);
    await callNative(() =>
      withAbort(abortSignal, 'writeFile', (token) => this.#native.writeFile(path, bytes, compact({ mode }), token)),
    );
  }

  /**
   * Writes a file from a stream of unknown length. The chunks are spooled to an unlinked temp
   * file on this host (never held in memory), then uploaded as {@link Session.writeFile} does.
   *
   * @param source A web `ReadableStream<Uint8Array>` or any (async) iterable of `Uint8Array`.
   */
  async writeFileStream(path: string, source: ByteSource, options: WriteFileOptions = {}): Promise<void> {
    expectString(path, 'path');
    expectByteSource(source, 'source');
    const { mode, abortSignal } = checkWriteOptions(options);
    throwIfAborted(abortSignal, 'writeFileStream');
    const writer = callNativeSync(() => this.#native.createFileWriter(path, compact({ mode })));
    const onAbort = (): void => void writer.abort();
    abortSignal?.addEventListener('abort', onAbort, { once: true });
    try {
      await pipeToWriter(source, writer, () =>
        callNative(() => withAbort(abortSignal, 'writeFileStream', (token) => writer.close(token))),
      );
    } catch (error) {
      if (abortSignal?.aborted && !AbortedError.isInstance(error)) {
        throw new AbortedError('writeFileStream aborted', { details: { operation: 'writeFileStream' }, cause: error });
      }
      throw error;
    } finally {
      abortSignal?.removeEventListener('abort', onAbort);
    }
  }

  /**
   * Commits this container to the local template image `berth-template:<key>` (pausing it
   * meanwhile). A later `createSession({ image: 'berth-template:<key>' })` starts from this
   * filesystem with berth labels of its own. The engine copies the container's labels and env
   * into the image (env values also into its `ContainerConfig` metadata, which nothing can
   * drop): commit only a container whose env holds no secret.
   *
   * Engine API: `POST /commit?container={id}&repo=berth-template&tag={key}&pause=true`.
   *
   * @param key 1 to 128 of `[a-z0-9_.-]`, starting with a letter or digit.
   * @returns The image id.
   * @param options `abortSignal` (`E_ABORTED`).
   * @throws InvalidArgumentError `E_INVALID_ARGUMENT` for a bad key.
   */
  async commitTemplate(key: string, options: CallOptions = {}): Promise<string> {
    expectString(key, 'key');
    const signal = callSignal(options);
    return callNative(() => withAbort(signal, 'commitTemplate', (token) => this.#native.commitTemplate(key, token)));
  }

  /**
   * The host address a container port is published on, e.g. `"127.0.0.1:49153"` (for a
   * remote engine, the engine's host). Retried briefly while the engine fills the mapping.
   *
   * Engine API: `GET /containers/{id}/json`.
   *
   * @param port A container port the session was created with (1–65535).
   * @param options `abortSignal` (`E_ABORTED`).
   * @throws InvalidArgumentError `E_INVALID_ARGUMENT` for a port out of range or not published.
   */
  async hostAddress(port: number, options: CallOptions = {}): Promise<string> {
    expectPort(port, 'port');
    const signal = callSignal(options);
    return callNative(() => withAbort(signal, 'hostAddress', (token) => this.#native.hostAddress(port, token)));
  }

  /**
   * One usage sample of the container, from ONE engine request: CPU share, memory and its
   * limit, processes and the pids limit, network and block I/O bytes (shape and units:
   * {@link SessionMetrics}; bytes, percent of one CPU, ms). A figure the engine does not
   * report is `null`. The CPU share is measured since this handle's previous `metrics()`
   * call, so the first call's `cpu.percent` is `null`: sample twice, some time apart. A paused
   * session reports its figures (CPU share 0); one berth stopped resolves `running: false`
   * with every figure `null`.
   *
   * Engine API: `GET /containers/{id}/stats?stream=false&one-shot=true` (Docker answers at its
   * collector's next tick, up to about 1 s); the handle's first call also reads the configured
   * limits once (`GET /containers/{id}/json`).
   *
   * @param options `timeoutMs`: bound of the whole call (default 10000, the request's own
   *   timeout); `abortSignal` (`E_ABORTED`).
   * @throws InvalidArgumentError `E_INVALID_ARGUMENT` for bad options, before any engine call.
   * @throws SessionDeadError `E_SESSION_DEAD` when the container died or was removed outside
   *   berth (`details.cause`).
   * @throws SessionNotFoundError `E_SESSION_NOT_FOUND` once berth removed the container.
   * @throws EngineUnavailableError `E_ENGINE_UNAVAILABLE` when no answer came within `timeoutMs`.
   * @example
   * ```ts
   * await session.metrics(); // primes the CPU share
   * const m = await session.metrics();
   * console.log(m.cpu.percent, m.memory.usedBytes, m.pids.current);
   * ```
   */
  async metrics(options: MetricsOptions = {}): Promise<SessionMetrics> {
    expectOptionalOptions(options, 'options', METRICS_OPTION_KEYS);
    expectOptionalNumber(options.timeoutMs, 'timeoutMs'); // its range (1 to 2^31 - 1) is the core's
    expectOptionalSignal(options.abortSignal, 'abortSignal');
    const native = compact({ timeoutMs: options.timeoutMs });
    return metricsOf(
      await callNative(() => withAbort(options.abortSignal, 'metrics', (token) => this.#native.metrics(native, token))),
    );
  }

  /**
   * The container's working directory, where an exec without `cwd` starts: the create's
   * `workDir`, else the image's, else `/`.
   *
   * Engine API: `GET /containers/{id}/json` (`Config.WorkingDir`).
   *
   * @param options `abortSignal` (`E_ABORTED`).
   * @throws SessionNotFoundError `E_SESSION_NOT_FOUND` once the container is gone.
   */
  async workingDirectory(options: CallOptions = {}): Promise<string> {
    const signal = callSignal(options);
    return callNative(() => withAbort(signal, 'workingDirectory', (token) => this.#native.workingDirectory(token)));
  }

  /**
   * Sets the container's outbound network access: `'deny-all'` detaches it from every network
   * (loopback only; published ports stop answering), `'allow-all'` attaches it again to the
   * network it was created on (`networkMode`, default the engine's bridge), still kept off the
   * local network unless created with `localNetwork: true` (the isolation rules outlive the
   * switch; docs/network.md). Idempotent. Host
   * and CIDR rules (the harness's `'custom'` mode) need a firewall outside the container,
   * which berth does not run.
   *
   * Engine API: `GET /containers/{id}/json`, `POST /networks/{name}/disconnect`,
   * `POST /networks/{name}/connect` (by container id).
   *
   * @param policy `{ mode: 'allow-all' | 'deny-all' }`.
   * @throws InvalidArgumentError `E_INVALID_ARGUMENT` for another mode, or a container created
   *   with networkMode `none`, `host` or another container's network.
   * @throws SessionBusyError `E_SESSION_BUSY` (`reason: 'not-owner'`) on an adopted handle: the
   *   container is another live process's; no engine call.
   * @throws SessionNotFoundError `E_SESSION_NOT_FOUND` once the container is gone.
   */
  async setNetworkPolicy(policy: NetworkPolicy, options: CallOptions = {}): Promise<void> {
    expectOptions(policy, 'policy', NETWORK_POLICY_KEYS, 'policy.');
    expectString(policy.mode, 'mode');
    const signal = callSignal(options);
    return callNative(() =>
      withAbort(signal, 'setNetworkPolicy', (token) => this.#native.setNetworkPolicy(policy.mode, token)),
    );
  }

  /**
   * Stops the container if this handle owns it (created or inherited), else resolves
   * `{ stopped: false, reason: 'not-owner' }` without an engine call unless `force`. When the
   * session was created with `removeAfterStopMs`, an owner's stop arms this process's removal
   * timer (it never keeps Node alive): the container is removed by id once it has been stopped
   * that long, unless it was started again meanwhile.
   *
   * An owner first reads the session's records: once another process's harness resume took the
   * duty over (a handover, docs/lifetimes.md "Parked sessions and handover"), this handle acts as adopted.
   *
   * Engine API: `GET /volumes?filters=…` (an owner), `GET /containers/{id}/json`,
   * `POST /volumes/create` (a stop record, so the stopped container is never reported dead),
   * `POST /containers/{id}/stop?t=…`; when the timer fires, `GET /containers/{id}/json` and
   * `DELETE /containers/{id}?force=1&v=1`.
   *
   * @param options `force`, `timeoutMs` (grace period in ms before SIGKILL, 0 to 2,147,483,647),
   *   `abortSignal` (`E_ABORTED` at once; the container may still stop, as the engine received
   *   the request).
   * @throws InvalidArgumentError `E_INVALID_ARGUMENT` for a bad option, before any engine call.
   * @throws {BerthError} `E_ENGINE`, `E_ENGINE_UNAVAILABLE`, `E_ABORTED` (the core's `Session::stop`).
   */
  async stop(options: StopOptions = {}): Promise<StopResult> {
    expectOptionalOptions(options, 'options', STOP_OPTION_KEYS);
    expectOptionalBoolean(options.force, 'force');
    expectOptionalNumber(options.timeoutMs, 'timeoutMs');
    expectOptionalSignal(options.abortSignal, 'abortSignal');
    const native = compact({ force: options.force, timeoutMs: options.timeoutMs });
    return callNative(() => withAbort(options.abortSignal, 'stop', (token) => this.#native.stop(native, token)));
  }

  /**
   * Removes the container, by id, with its anonymous volumes, if this handle owns it.
   *
   * Results: `{ removed: true }` for the call that removed it; `{ removed: false, reason: 'absent' }`
   * when the engine no longer had it; `{ removed: false, reason: 'already-removed' }` (no engine
   * call) for any later call; `{ removed: false, reason: 'not-owner' }` for an adopted handle
   * without `force`, and for an owner whose duty another process's harness resume took over (a
   * handover: docs/lifetimes.md "Parked sessions and handover"). Concurrent calls, through this handle or
   * any other handle of this process sharing its duty, share one engine call. A failed removal
   * rejects and keeps the duty, so calling again retries.
   *
   * Engine API: `GET /volumes?filters=…` (an owner: did the duty move?), then
   * `DELETE /containers/{id}?force=1&v=1` and the record volumes.
   *
   * @param options `force`: remove even when adopted; `abortSignal`: settles the call at once
   *   with `E_ABORTED` and keeps the duty (call `remove()` again).
   * @throws EngineError `E_ENGINE` / EngineUnavailableError `E_ENGINE_UNAVAILABLE` when removal fails (retry later).
   * @throws AbortedError `E_ABORTED` when `abortSignal` fires (the duty is kept).
   */
  async remove(options: RemoveOptions = {}): Promise<RemoveResult> {
    expectOptionalOptions(options, 'options', REMOVE_OPTION_KEYS);
    expectOptionalBoolean(options.force, 'force');
    expectOptionalSignal(options.abortSignal, 'abortSignal');
    const native = compact({ force: options.force });
    return callNative(() => withAbort(options.abortSignal, 'remove', (token) => this.#native.remove(native, token)));
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
  async release(options: CallOptions = {}): Promise<ReleaseResult> {
    const signal = callSignal(options);
    return callNative(() =>
      withAbort(signal, 'release', (token) => this.#native.release(token)),
    ) as Promise<ReleaseResult>;
  }

  /** Same as {@link Session.remove} without options, for `await using session = ...`. */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.remove();
  }
}

/** The checked `abortSignal` of a method's `CallOptions`. */
function callSignal(options: CallOptions): AbortSignal | undefined {
  expectOptionalOptions(options, 'options', CALL_OPTION_KEYS);
  expectOptionalSignal(options.abortSignal, 'abortSignal');
  return options.abortSignal;
}

function toBuffer(value: unknown, field = 'stdin'): Buffer | undefined {
  if (value === undefined) return undefined;
  if (typeof value === 'string') return Buffer.from(value, 'utf8');
  if (value instanceof Uint8Array) return Buffer.from(value.buffer, value.byteOffset, value.byteLength);
  return invalid(field, 'expected a Uint8Array or a string');
}

function checkWriteOptions(options: WriteFileOptions): WriteFileOptions {
  expectOptionalOptions(options, 'options', WRITE_FILE_OPTION_KEYS);
  expectOptionalNumber(options.mode, 'mode'); // its range (0 to 0o7777) is the core's
  expectOptionalSignal(options.abortSignal, 'abortSignal');
  return options;
}

function throwIfAborted(signal: AbortSignal | undefined, operation: string): void {
  if (signal?.aborted) {
    throw new AbortedError(`${operation} aborted before it started`, { details: { operation }, cause: signal.reason });
  }
}

/**
 * A native cancel token following `signal` for as long as a process runs; `detach` removes
 * the listener. Rejects (throws) with `E_ABORTED` when the signal is already aborted.
 */
function attachSignal(
  signal: AbortSignal | undefined,
  operation: string,
): { token: NativeCancelToken | undefined; detach: () => void } {
  if (!signal) return { token: undefined, detach: () => {} };
  throwIfAborted(signal, operation);
  const token = new (loadBinding().CancelToken)();
  const onAbort = (): void => token.cancel();
  signal.addEventListener('abort', onAbort, { once: true });
  return { token, detach: () => signal.removeEventListener('abort', onAbort) };
}

/** A native finding without `undefined` members. */
export function finding(f: { code: string; kind: string; message: string; path?: string | null; field?: string | null; repaired: boolean }): Finding {
  return compact({
    code: f.code,
    kind: f.kind as Finding['kind'],
    message: f.message,
    path: f.path ?? undefined,
    field: f.field ?? undefined,
    repaired: f.repaired,
  });
}

function item(i: { kind: string; source?: string | null; target?: string | null }): ReplacedItem {
  return compact({ kind: i.kind, source: i.source ?? undefined, target: i.target ?? undefined });
}
