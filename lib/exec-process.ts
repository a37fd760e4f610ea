import type * as Native from '../binding';
import { withAbort } from './abort';
import { fromNative } from './errors/from-native';
import { callNative } from './native-call';
import { CALL_OPTION_KEYS, type CallOptions } from './types';
import { expectOptionalOptions, expectOptionalSignal } from './validate';

/**
 * A process started by {@link Session.spawn}: its output as web streams while it runs, its
 * exit code at the end, and a tree kill. The shape of the AI SDK's `SandboxProcess`.
 *
 * Back-pressure: chunks are pulled from the engine only as fast as the streams are read (a
 * few chunks are queued natively, never more). A stream nobody reads holds the process back
 * once its queue is full, as a full pipe would; `cancel()` a stream you do not want, and its
 * output is discarded from then on.
 */
export class ExecProcess {
  readonly #native: Native.BindingExecProcess;
  readonly #detach: () => void;
  #waited: Promise<{ exitCode: number; oomKilled: boolean }> | undefined;

  /** Standard output, chunk by chunk, as the process writes it. Errors with `E_EXEC_TIMEOUT` / `E_ABORTED`. */
  readonly stdout: ReadableStream<Uint8Array>;
  /** Standard error, as {@link ExecProcess.stdout}. */
  readonly stderr: ReadableStream<Uint8Array>;

  /** @internal Made by `Session.spawn`. `detach` runs once the process ended (abort wiring). */
  constructor(native: Native.BindingExecProcess, detach: () => void = () => {}) {
    this.#native = native;
    this.#detach = detach;
    this.stdout = pullStream((native_) => native_.read('stdout'), () => native.close('stdout'), native);
    this.stderr = pullStream((native_) => native_.read('stderr'), () => native.close('stderr'), native);
  }

  /**
   * Resolves with the exit code as the engine reports it once the process ended (a killed
   * process reports its signal's code, e.g. 143), and whether the session's memory limit had
   * the OOM killer end it (`oomKilled`: exit code 137 and a new OOM kill counted in the
   * container's cgroup, one more command run only after a 137). Any number of calls share one
   * answer.
   *
   * @throws ExecTimeoutError `E_EXEC_TIMEOUT` past `timeoutMs` (the tree is killed right after, in the background; `details.stdout`/`stderr` hold the last 64 KiB).
   * @throws AbortedError `E_ABORTED` when the `abortSignal` fired; same cleanup and details.
   */
  wait(): Promise<{
    /** The exit code as the engine reports it (a killed process: its signal's code, e.g. 143). */
    exitCode: number;
    /** True when the memory limit's OOM killer ended it (not a bare 137). */
    oomKilled: boolean;
  }> {
    this.#waited ??= callNative(() => this.#native.wait())
      .then(({ exitCode, oomKilled }) => ({ exitCode, oomKilled }))
      .finally(this.#detach);
    return this.#waited;
  }

  /**
   * Kills the process and every process it started in the container (TERM, then KILL: one
   * engine exec), and resolves once it ended and the tree kill finished, or at the process's
   * own `timeoutMs` (counted from `spawn`) or its spawn's `abortSignal` when sooner (then
   * {@link ExecProcess.wait} says `E_EXEC_TIMEOUT` / `E_ABORTED`, or the exit code if the
   * process had ended). Without those, at most 20 s for the output to end and 10 s more for the
   * tree kill; the kill goes on in the background after. Idempotent; harmless after the process ended. From the call
   * on, output is delivered only while a stream's queue has room (the rest is dropped), so
   * streams nobody reads never keep a killed process alive.
   *
   * @param options `abortSignal`: stops waiting for the kill. The kill goes on in the background
   *   and {@link ExecProcess.wait} still settles; a signal aborted before the call starts no kill.
   * @throws AbortedError `E_ABORTED` when `abortSignal` fires first.
   * @throws InvalidArgumentError `E_INVALID_ARGUMENT` for an unknown option or a non-signal.
   */
  async kill(options: CallOptions = {}): Promise<void> {
    expectOptionalOptions(options, 'options', CALL_OPTION_KEYS);
    const signal = options.abortSignal;
    expectOptionalSignal(signal, 'abortSignal');
    await callNative(() => withAbort(signal, 'kill', (token) => this.#native.kill(token)));
  }
}

/**
 * A pull-based `ReadableStream` over a native `read()`: one native read per `pull`, so the
 * stream's own queue (high-water mark 1 chunk) plus the native channel bound what is held.
 * `onEnd` runs once when the stream closes, errors or is cancelled.
 */
export function pullStream<N>(
  read: (native: N) => Promise<Buffer | null>,
  close: () => unknown,
  native: N,
  onEnd: () => void = () => {},
): ReadableStream<Uint8Array> {
  let ended = false;
  const end = (): void => {
    if (!ended) {
      ended = true;
      onEnd();
    }
  };
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        let chunk: Buffer | null;
        try {
          chunk = await read(native);
        } catch (error) {
          end();
          controller.error(fromNative(error));
          return;
        }
        if (chunk === null) {
          end();
          controller.close();
        } else controller.enqueue(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength));
      },
      async cancel() {
        end();
        await close();
      },
    },
    { highWaterMark: 1 },
  );
}
