import type { HarnessV1NetworkPolicy, HarnessV1NetworkSandboxSession, HarnessV1PortEndpoint } from '@ai-sdk/harness';
import type { ExecProcess } from '../exec-process';
import type { Session } from '../session';
import type { MetricsOptions, SessionMetrics } from '../types';
import { expectByteSource } from '../file-stream';
import { expectObject, expectOptionalSignal, expectOptionalString, expectString, invalid } from '../validate';
import { abortReason, rejectWithAbortReason } from './abort-reason';
import { checkLineRange, sliceLines } from './text-range';

/** How a harness session was obtained, which decides what `stop()` and `destroy()` do. */
export interface SandboxSessionLifecycle {
  /**
   * True for a session created without a `sessionId`: nobody can resume it, so `stop()`
   * removes it (by id) instead of leaving a stopped container behind.
   */
  removeOnStop: boolean;
}

/** The caps of a harness session's buffered results (see `DockerSandboxProviderOptions`). */
export interface SandboxCaps {
  /** Cap on what `run` keeps of stdout and stderr together, in bytes. */
  maxOutputBytes: number;
  /** Largest file `readFile`, `readBinaryFile` and `readTextFile` take, in bytes. */
  maxFileBytes: number;
}

/** The AI SDK's `Experimental_SandboxSession` (file I/O, exec, spawn), as the harness names it. */
export type SandboxSession = ReturnType<HarnessV1NetworkSandboxSession['restricted']>;
/** The AI SDK's `Experimental_SandboxProcess`. */
export type SandboxProcess = Awaited<ReturnType<SandboxSession['spawn']>>;

type ProcessOptions = Parameters<SandboxSession['spawn']>[0];
type ReadOptions = Parameters<SandboxSession['readFile']>[0];
type TextReadOptions = Parameters<SandboxSession['readTextFile']>[0];
type StreamWriteOptions = Parameters<SandboxSession['writeFile']>[0];
type BinaryWriteOptions = Parameters<SandboxSession['writeBinaryFile']>[0];
type TextWriteOptions = Parameters<SandboxSession['writeTextFile']>[0];

/**
 * The AI SDK harness's view of one berth session: `HarnessV1NetworkSandboxSession` over a
 * {@link Session}.
 *
 * Ownership follows the berth handle: `stop()` and `destroy()` act only when this process
 * owns the container (it created it, also when the framework resumed it in the same process
 * after `detach()`; or it `inherited` it from a dead owner after a cross-process resume); an
 * adopted handle's `stop()`/`destroy()` touch nothing. Both are idempotent, and removals
 * through several sessions of one process make one engine call.
 * Commands given as strings run under `sh -c` in `defaultWorkingDirectory` unless
 * `workingDirectory` says otherwise; relative file paths resolve against it too.
 */
export class BerthSandboxSession implements HarnessV1NetworkSandboxSession {
  readonly #session: Session;
  readonly #lifecycle: SandboxSessionLifecycle;
  readonly #caps: SandboxCaps;
  /** The container name (stable, derived from the session id). */
  readonly id: string;
  readonly defaultWorkingDirectory: string;
  readonly ports: ReadonlyArray<number>;
  readonly description: string;

  /** @internal Made by the provider once the working directory has been read from the container. */
  constructor(
    session: Session,
    options: { defaultWorkingDirectory: string; ports: number[] } & SandboxSessionLifecycle & Partial<SandboxCaps>,
  ) {
    this.#session = session;
    this.#lifecycle = { removeOnStop: options.removeOnStop };
    this.#caps = {
      maxOutputBytes: options.maxOutputBytes ?? DEFAULT_CAP_BYTES,
      maxFileBytes: options.maxFileBytes ?? DEFAULT_CAP_BYTES,
    };
    this.id = session.name;
    this.defaultWorkingDirectory = options.defaultWorkingDirectory;
    this.ports = Object.freeze([...options.ports]);
    this.description = [
      `A Linux container (Docker engine) managed by berth, named ${session.name}.`,
      `The default working directory is ${this.defaultWorkingDirectory}; commands run under \`sh -c\` there.`,
      this.ports.length
        ? `Ports exposed to the host (on 127.0.0.1): ${this.ports.join(', ')}.`
        : 'No ports are exposed to the host.',
    ].join(' ');
  }

  /** The berth handle underneath (its ownership, owner, exec and file APIs). */
  get berthSession(): Session {
    return this.#session;
  }

  /**
   * `path` resolved against `defaultWorkingDirectory` when relative. A path that is not a string
   * is `E_INVALID_ARGUMENT` naming `field`; its form and length are the core's to check.
   */
  #path(path: unknown, field = 'path'): string {
    expectString(path, field);
    if (path.startsWith('/')) return path;
    const base = this.defaultWorkingDirectory.replace(/\/+$/, '');
    return `${base}/${path.replace(/^\.\//, '')}`;
  }

  /**
   * Starts `sh -c <command>` (see `Session.spawn`). When `abortSignal` fires the process tree
   * is killed and `wait()`, `stdout` and `stderr` reject with `abortSignal.reason` (the
   * caller's own value), as the AI SDK's `SandboxSession.spawn` contract says; a spawn aborted
   * before it started rejects with it too.
   */
  readonly spawn = async (options: ProcessOptions): Promise<SandboxProcess> => {
    const { command, cwd, env, abortSignal } = this.#commandOptions(options);
    let process: ExecProcess;
    try {
      process = await this.#session.spawn(['sh', '-c', command], { cwd, ...env, ...abortSignal });
    } catch (error) {
      throw abortReason(error, options.abortSignal);
    }
    return rejectWithAbortReason(process, options.abortSignal);
  };

  /**
   * Runs `sh -c <command>` to its end and answers its exit code and its stdout and stderr as
   * UTF-8 text: one buffered `Session.execText` (over the session's command channel, or an
   * engine exec where the channel cannot serve it, see `Session.exec`), so no stream is made per
   * command, and the output's bytes are freed as the text is made. Both streams together are
   * capped at the provider's `maxOutputBytes` (default 64 MiB) and by the process-wide budget
   * of buffered output (`setBufferBudget`, default 256 MiB): the head is kept,
   * `truncated: true` says so, and a command that writes more than 16 MiB past the cap is
   * killed (an endless `yes` settles). A cut multi-byte character decodes as U+FFFD. An aborted run kills the process tree and rejects with `abortSignal.reason`, as
   * `spawn` does; other failures are berth's errors (codes in the core's `Session::exec` doc;
   * a timeout's or abort's error carries at most the last 64 KiB of each stream).
   */
  readonly run = async (
    options: ProcessOptions,
  ): Promise<{
    /** The exit code as the engine reports it (a killed process: its signal's code, e.g. 143). */
    exitCode: number;
    /** Standard output as UTF-8 text, its head when `truncated`. */
    stdout: string;
    /** Standard error as UTF-8 text, its head when `truncated`. */
    stderr: string;
    /** True when the output was cut at `maxOutputBytes` (or the process-wide buffer budget). */
    truncated: boolean;
    /**
     * True when the session's memory limit (`memoryBytes`) had the OOM killer end the command:
     * exit code 137 and a new OOM kill counted in the container's cgroup (one extra command,
     * run only after a 137), not a bare 137.
     */
    oomKilled: boolean;
  }> => {
    const { command, cwd, env, abortSignal } = this.#commandOptions(options);
    try {
      const result = await this.#session.execText(['sh', '-c', command], {
        cwd,
        ...env,
        ...abortSignal,
        maxBufferBytes: this.#caps.maxOutputBytes,
      });
      return {
        exitCode: result.exitCode,
        stdout: result.stdout,
        stderr: result.stderr,
        truncated: result.truncated,
        oomKilled: result.oomKilled,
      };
    } catch (error) {
      throw abortReason(error, options.abortSignal);
    }
  };

  /**
   * The berth options of a harness command (`spawn` and `run`): the command checked as a
   * string, its working directory resolved against `defaultWorkingDirectory`. A command,
   * directory or environment of the wrong type is `E_INVALID_ARGUMENT` before any engine call.
   */
  #commandOptions(options: ProcessOptions): {
    command: string;
    cwd: string;
    env: { env?: Record<string, string> };
    abortSignal: { abortSignal?: AbortSignal };
  } {
    if (options === null || typeof options !== 'object') invalid('options', 'expected an object with a command');
    const { command, workingDirectory, env, abortSignal } = options;
    if (typeof command !== 'string') invalid('command', `expected a string, got ${typeof command}`);
    expectOptionalString(workingDirectory, 'workingDirectory');
    if (env !== undefined && (env === null || typeof env !== 'object' || Array.isArray(env))) {
      invalid('env', 'expected an object of strings');
    }
    expectOptionalSignal(abortSignal, 'abortSignal');
    return {
      command,
      cwd: this.#path(workingDirectory ?? this.defaultWorkingDirectory, 'workingDirectory'),
      env: env ? { env } : {},
      abortSignal: abortSignal ? { abortSignal } : {},
    };
  }

  /** The file as a stream of at most the provider's `maxFileBytes` (`E_FILE_TOO_LARGE` past it), or `null`. */
  readonly readFile = async (options: ReadOptions): Promise<ReadableStream<Uint8Array> | null> => {
    const { path, abortSignal } = fileOptions(options);
    return this.#session.openFile(this.#path(path), this.#readOptions(abortSignal));
  };

  /** The file's bytes (at most the provider's `maxFileBytes`: `E_FILE_TOO_LARGE`), or `null`. */
  readonly readBinaryFile = async (options: ReadOptions): Promise<Uint8Array | null> => {
    const { path, abortSignal } = fileOptions(options);
    const bytes = await this.#session.readFile(this.#path(path), this.#readOptions(abortSignal));
    return bytes === null ? null : new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  };

  /**
   * The file as text (`encoding`, default UTF-8), or `null` when absent; `startLine`/`endLine`
   * cut it exactly as the AI SDK's `extractLines` (see {@link sliceLines}). A bad bound or an
   * unknown encoding is `E_INVALID_ARGUMENT` before the file is read; a file over the
   * provider's `maxFileBytes` is `E_FILE_TOO_LARGE`.
   */
  readonly readTextFile = async (options: TextReadOptions): Promise<string | null> => {
    const { path, abortSignal, encoding = 'utf-8', startLine, endLine } = fileOptions(options);
    expectString(encoding, 'encoding');
    checkLineRange(startLine, endLine);
    const text = decoder(encoding);
    const bytes = await this.#session.readFile(this.#path(path), this.#readOptions(abortSignal));
    if (bytes === null) return null;
    return sliceLines(text.decode(bytes), startLine, endLine);
  };

  #readOptions(abortSignal: AbortSignal | undefined): { maxBytes: number; abortSignal?: AbortSignal } {
    return { maxBytes: this.#caps.maxFileBytes, ...(abortSignal ? { abortSignal } : {}) };
  }

  /**
   * Writes the file from a stream of bytes (spooled on this host, never held in memory), as
   * `Session.writeFileStream`: atomically, as the session's user, parents created. A relative
   * `path` is resolved against `defaultWorkingDirectory`. Failures are berth's errors
   * (`E_PERMISSION_DENIED`, `E_NO_SPACE`, ...; codes in the core's `Session::write_file` doc).
   */
  readonly writeFile = async (options: StreamWriteOptions): Promise<void> => {
    const { path, content, abortSignal } = fileOptions(options);
    expectByteSource(content, 'content');
    return this.#session.writeFileStream(this.#path(path), content, abortSignal ? { abortSignal } : {});
  };

  /**
   * Writes the bytes to the file, as `Session.writeFile`: atomically, as the session's user,
   * parents created. A relative `path` is resolved against `defaultWorkingDirectory`.
   */
  readonly writeBinaryFile = async (options: BinaryWriteOptions): Promise<void> => {
    const { path, content, abortSignal } = fileOptions(options);
    if (!(content instanceof Uint8Array)) invalid('content', 'expected a Uint8Array');
    return this.#session.writeFile(this.#path(path), content, abortSignal ? { abortSignal } : {});
  };

  /**
   * Writes the text to the file in `encoding` (default UTF-8; one Node does not know is
   * `E_INVALID_ARGUMENT`), as `Session.writeFile`. A relative `path` is resolved against
   * `defaultWorkingDirectory`.
   */
  readonly writeTextFile = async (options: TextWriteOptions): Promise<void> => {
    const { path, content, abortSignal, encoding } = fileOptions(options);
    expectString(content, 'content');
    expectOptionalString(encoding, 'encoding');
    const resolved = this.#path(path);
    return this.#session.writeFile(resolved, encodeText(content, encoding), abortSignal ? { abortSignal } : {});
  };

  /**
   * The URL a published container port is reached at from this host, e.g.
   * `http://127.0.0.1:49153` (`protocol` defaults to `http`), from `Session.hostAddress`: a port
   * the sandbox was not created with is `E_INVALID_ARGUMENT`. Engine API: `GET /containers/{id}/json`.
   */
  readonly getPortEndpoint = async (options: {
    port: number;
    protocol?: 'http' | 'https' | 'ws';
  }): Promise<HarnessV1PortEndpoint> => {
    expectObject(options, 'options');
    const { port, protocol = 'http' } = options;
    if (!PROTOCOLS.includes(protocol)) invalid('protocol', `expected one of ${PROTOCOLS.join(', ')}`);
    return { url: `${protocol}://${await this.#session.hostAddress(port)}` };
  };

  /** @deprecated Use `getPortEndpoint` instead (as the harness interface says). */
  readonly getPortUrl = async (options: { port: number; protocol?: 'http' | 'https' | 'ws' }): Promise<string> =>
    (await this.getPortEndpoint(options)).url;

  /**
   * Stops the container when this handle owns it; a session created without a `sessionId`
   * (not resumable) is removed instead. An adopted handle touches nothing. Idempotent.
   */
  readonly stop = async (): Promise<void> => {
    if (this.#lifecycle.removeOnStop) {
      await this.#session.remove();
      return;
    }
    await this.#session.stop();
  };

  /**
   * Removes the container (by id, with its anonymous volumes) when this handle owns it:
   * created here, or taken over by the provider's `resumeSession` (a handover). A handle whose
   * duty another process's resume took since, and an adopted one, touch nothing (an adopted
   * one drops its own holder record). Idempotent.
   */
  readonly destroy = async (): Promise<void> => {
    if (this.#session.ownership === 'adopted') {
      await this.#session.release();
      return;
    }
    await this.#session.remove();
  };

  /**
   * `'deny-all'` detaches the container from every network (loopback only); `'allow-all'`
   * attaches it again to the network it was created on: the internet, kept off the local
   * network (host services, other containers) unless the session was created with
   * `localNetwork: true` (docs/network.md). `'custom'` (host and CIDR rules)
   * rejects with `E_INVALID_ARGUMENT`: enforcing it needs a firewall outside the container,
   * which berth does not run. Only an owning handle may change it (`E_SESSION_BUSY` with
   * `reason: 'not-owner'` on an adopted one). See `Session.setNetworkPolicy`.
   */
  readonly setNetworkPolicy = async (policy: HarnessV1NetworkPolicy): Promise<void> => {
    expectObject(policy, 'policy');
    if (policy.mode === 'custom') {
      invalid('policy.mode', "berth cannot enforce host or CIDR rules; use 'allow-all' or 'deny-all'");
    }
    await this.#session.setNetworkPolicy({ mode: policy.mode });
  };

  /**
   * One usage sample of the sandbox: CPU share since this session object's previous sample
   * (percent of one CPU; `null` on the first), memory and its limit, processes and the pids
   * limit, network and block I/O bytes. See `Session.metrics` for the shape, units and errors
   * (`E_SESSION_DEAD` with `details.cause` when the sandbox died). Not part of the AI SDK's
   * interface: reach it on the object the provider's `createSession`/`resumeSession` returns
   * (`HarnessAgent` hands it to the adapter's `doStart`; `onSession` gets the restricted view).
   *
   * Engine API: `GET /containers/{id}/stats?stream=false&one-shot=true`.
   */
  readonly metrics = (options?: MetricsOptions): Promise<SessionMetrics> => this.#session.metrics(options);

  /** The file and process surface only: no stop, destroy or ports. Same container. */
  readonly restricted = (): SandboxSession => restrictedView(this);
}

/** A plain object with only `SandboxSession`'s members, bound to `s`. */
export function restrictedView(s: SandboxSession): SandboxSession {
  return Object.freeze({
    description: s.description,
    readFile: s.readFile,
    readBinaryFile: s.readBinaryFile,
    readTextFile: s.readTextFile,
    writeFile: s.writeFile,
    writeBinaryFile: s.writeBinaryFile,
    writeTextFile: s.writeTextFile,
    spawn: s.spawn,
    run: s.run,
  });
}

/** The URL schemes `getPortEndpoint` answers with. */
const PROTOCOLS: readonly unknown[] = ['http', 'https', 'ws'];

/**
 * The options object of a file call, with its `abortSignal` checked: anything else (a missing
 * object, a wrong signal) is `E_INVALID_ARGUMENT` before any engine call. The harness may pass
 * keys of its own, so unknown keys are not refused here.
 */
function fileOptions<T extends { abortSignal?: AbortSignal }>(options: T): T {
  expectObject(options, 'options');
  expectOptionalSignal(options.abortSignal, 'abortSignal');
  return options;
}

/** The default of each cap (64 MiB), when the session is made without the provider's. */
const DEFAULT_CAP_BYTES = 64 * 1024 * 1024;

function encodeText(content: string, encoding: string | undefined): Uint8Array {
  const name = (encoding ?? 'utf-8').toLowerCase();
  if (name === 'utf-8' || name === 'utf8') return Buffer.from(content, 'utf8');
  if (Buffer.isEncoding(name)) return Buffer.from(content, name);
  invalid('encoding', `unsupported encoding ${String(encoding)}`);
}

/** A `TextDecoder` for `encoding`; an encoding it does not know is `E_INVALID_ARGUMENT`. */
function decoder(encoding: string): InstanceType<typeof TextDecoder> {
  try {
    return new TextDecoder(encoding);
  } catch {
    invalid('encoding', `unsupported encoding ${String(encoding)}`);
  }
}
