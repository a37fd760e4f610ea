import { loadBinding } from './binding';
import { callNativeSync } from './native-call';
import { expectString, invalid } from './validate';

/** The prefix berth's root API puts before container names. */
export const DEFAULT_PREFIX = 'berth';

/**
 * The container name of a session: a pure function, the same in every process and version.
 *
 * It reproduces the naming scheme of the TypeScript backend berth replaces exactly (sanitised
 * id plus an FNV-1a hash over the UTF-16 code units of `JSON.stringify([prefix, sessionId])`),
 * so any JS string is accepted here, lone surrogates included; session operations are
 * stricter about ids.
 *
 * @param sessionId Any non-empty string.
 * @param prefix Name prefix. @default 'berth' (pass `'please'` for the old backend's names)
 * @returns A valid container name.
 * @throws InvalidArgumentError `E_INVALID_ARGUMENT` when an argument is not a string, or the id is empty.
 * @example
 * ```ts
 * import { containerName } from '@berth/core';
 * containerName('my-session'); // 'berth-my-session-…'
 * ```
 */
export function containerName(sessionId: string, prefix: string = DEFAULT_PREFIX): string {
  expectString(sessionId, 'sessionId', { wellFormed: false });
  // No session can have the empty id (`createSession` refuses it), so no name is made for it.
  if (sessionId.length === 0) invalid('sessionId', 'must be 1 to 256 UTF-16 code units long (got 0)');
  expectString(prefix, 'prefix', { wellFormed: false });
  return callNativeSync(() => loadBinding().containerName(sessionId, prefix));
}
