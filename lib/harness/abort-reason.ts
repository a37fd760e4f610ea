import { AbortedError } from '../errors/aborted-error';
import type { ExecProcess } from '../exec-process';

/**
 * The AI SDK's `SandboxProcess` contract for an aborted `spawn`: the process tree is killed
 * (berth's own abort wiring does that) and `wait()`, `stdout` and `stderr` reject with the
 * caller's own `abortSignal.reason`, not with a library error. berth's `E_ABORTED` (whose
 * `details` hold the output tail) is swapped for that reason only when `signal` fired;
 * every other error (`E_EXEC_TIMEOUT`, engine errors) passes through unchanged.
 */
export function rejectWithAbortReason(
  process: ExecProcess,
  signal: AbortSignal | undefined,
): Pick<ExecProcess, 'stdout' | 'stderr' | 'wait' | 'kill'> {
  if (signal === undefined) return process;
  const swap = (error: unknown): unknown => abortReason(error, signal);
  return {
    stdout: mapStreamError(process.stdout, swap),
    stderr: mapStreamError(process.stderr, swap),
    wait: () =>
      process.wait().catch((error: unknown) => {
        throw swap(error);
      }),
    kill: () => process.kill(),
  };
}

/** `signal.reason` in place of berth's `E_ABORTED` once `signal` fired; `error` otherwise. */
export function abortReason(error: unknown, signal: AbortSignal | undefined): unknown {
  return signal?.aborted === true && AbortedError.isInstance(error) ? signal.reason : error;
}

/** `stream`, chunk for chunk, erroring with `swap(error)` where `stream` errors with `error`. */
function mapStreamError(
  stream: ReadableStream<Uint8Array>,
  swap: (error: unknown) => unknown,
): ReadableStream<Uint8Array> {
  const reader = stream.getReader();
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        try {
          const next = await reader.read();
          if (next.done) controller.close();
          else controller.enqueue(next.value);
        } catch (error) {
          controller.error(swap(error));
        }
      },
      cancel: (reason) => reader.cancel(reason),
    },
    { highWaterMark: 0 },
  );
}
