import { loadBinding, type NativeBinding } from './binding';
import { engineOptions } from './engine-option';
import { withAbort } from './abort';
import { callNative } from './native-call';
import { PEEK_OPTION_KEYS, type PeekOptions, type PeekResult } from './types';
import { compact, expectOptionalOptions, expectOptionalSignal, expectOptionalString, expectString } from './validate';

/**
 * Looks at a session's container without changing anything: never creates, starts,
 * unpauses or pulls.
 *
 * Engine API: `GET /containers/{name}/json`.
 *
 * @param sessionId The session id.
 * @param options `prefix` (default `'berth'`) and engine selection.
 * @returns What holds the derived name (managed by berth or not), or `null` when nothing does.
 * @throws {BerthError} with a code listed in the core's `peek` doc
 *   (crates/berth-core/src/lifecycle/peek.rs); each code's class and `details`: docs/errors.md.
 * @example
 * ```ts
 * import { peek } from '@berth/core';
 *
 * const seen = await peek('agent-42');
 * if (seen?.owner?.liveness === 'dead') console.log(`${seen.name} is an orphan`);
 * ```
 */
export async function peek(sessionId: string, options: PeekOptions = {}): Promise<PeekResult | null> {
  expectString(sessionId, 'sessionId', { wellFormed: false });
  expectOptionalOptions(options, 'options', PEEK_OPTION_KEYS);
  expectOptionalString(options.prefix, 'prefix', { wellFormed: false });
  expectOptionalSignal(options.abortSignal, 'abortSignal');
  const native = compact({ prefix: options.prefix, ...engineOptions(options) }) as Parameters<
    NativeBinding['peek']
  >[1];
  const result = await callNative(() =>
    withAbort(options.abortSignal, 'peek', (token) => loadBinding().peek(sessionId, native, token)),
  );
  return result ? toPeekResult(result) : null;
}

/** The public shape of a native peek result: the binding leaves absent fields out, the public shape says null. */
export function toPeekResult(result: Awaited<ReturnType<NativeBinding['peek']>> & object): PeekResult {
  return { ...result, sessionId: result.sessionId ?? null, owner: result.owner ?? null, expiresAt: result.expiresAt ?? null, lifecycle: result.lifecycle ?? null, death: result.death ? { cause: result.death.cause, exitCode: result.death.exitCode ?? null, finishedAt: result.death.finishedAt ?? null } : null } as PeekResult;
}
