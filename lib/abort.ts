import { AbortedError } from './errors/aborted-error';
import { loadBinding, type NativeCancelToken } from './binding';

/**
 * Wires an optional `AbortSignal` to a native cancel token around one native call.
 *
 * napi-rs's own AbortSignal support only cancels queued work and overwrites `onabort`, so
 * berth uses its own token: an already-aborted signal rejects with `E_ABORTED` before any
 * native call (never the DOMException `throwIfAborted` would give); otherwise a
 * `{ once: true }` `abort` listener calls `token.cancel()`, and the listener is removed when
 * the call settles. Without a signal no token is made and `fn` gets `undefined`.
 *
 * @param signal The caller's signal, if any.
 * @param operation Named in the `E_ABORTED` error (`'createSession'`, `'exec'`, ...).
 * @param fn Starts the native call with the token.
 * @throws AbortedError (`E_ABORTED`) when `signal` is already aborted.
 */
export async function withAbort<T>(
  signal: AbortSignal | undefined,
  operation: string,
  fn: (token: NativeCancelToken | undefined) => Promise<T>,
): Promise<T> {
  if (!signal) return fn(undefined);
  try {
    signal.throwIfAborted();
  } catch (reason) {
    throw new AbortedError(`${operation} aborted before it started`, {
      details: { operation },
      cause: reason,
    });
  }
  const token = new (loadBinding().CancelToken)();
  const onAbort = (): void => token.cancel();
  signal.addEventListener('abort', onAbort, { once: true });
  try {
    return await fn(token);
  } finally {
    signal.removeEventListener('abort', onAbort);
  }
}
