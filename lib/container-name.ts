import { loadBinding } from './binding';
import { callNativeSync } from './native-call';
import { expectString } from './validate';

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
 * @param sessionId Any string (the empty one too: the naming vectors fix its name, though no
 *   session can have it, `createSession` refuses it).
 * @param prefix Name prefix. @default 'berth' (pass `'please'` for the old backend's names)
 * @returns A valid container name.
 * @throws InvalidArgumentError `E_INVALID_ARGUMENT` when an argument is not a string.
 * @example
 * ```ts
 * import { containerName } from '@berth/core';
 * containerName('my-session'); // 'berth-my-session-…'
 * ```
 */
export function containerName(sessionId: string, prefix: string = DEFAULT_PREFIX): string {
  expectString(sessionId, 'sessionId', { wellFormed: false });
  expectString(prefix, 'prefix', { wellFormed: false });
  return callNativeSync(() => loadBinding().containerName(sessionId, prefix));
}
