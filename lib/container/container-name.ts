import { containerName as berthContainerName } from '../container-name';

/** The old backend's default name prefix, which `@berth/core/container` keeps. */
export const LEGACY_PREFIX = 'please';

/**
 * The container name of a sandbox, exactly as the old `container.ts` derived it: the sanitised
 * id plus an FNV-1a hash over the UTF-16 code units of `JSON.stringify([prefix, sandboxId])`.
 * Pure; any JS string is accepted (lone surrogates too).
 *
 * Same as the root `containerName` except for the default prefix, `'please'` here (the old
 * module's) and `'berth'` there.
 *
 * @param sandboxId Any string.
 * @param prefix Name prefix. @default 'please'
 * @returns A valid container name, e.g. `containerName('x')` is `'please-x-f714455f'`.
 * @throws InvalidArgumentError `E_INVALID_ARGUMENT` when an argument is not a string.
 * @example
 * ```ts
 * import { containerName } from '@berth/core/container';
 * containerName('session-1'); // 'please-session-1-632a9165'
 * ```
 */
export function containerName(sandboxId: string, prefix: string = LEGACY_PREFIX): string {
  return berthContainerName(sandboxId, prefix);
}
