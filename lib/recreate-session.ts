import { withAbort } from './abort';
import { loadBinding, type NativeBinding } from './binding';
import { toNativeSpec } from './create-spec';
import { engineOptions } from './engine-option';
import { callNative } from './native-call';
import { progressCallback } from './pull-progress';
import { Session } from './session';
import type { RecreateSessionOptions } from './types';
import { compact, expectObject, expectOptionalBoolean, expectOptionalSignal, expectOptionalString, expectString } from './validate';

/**
 * Replaces a session's container with a new one made from `options`, explicitly, with rollback.
 *
 * Allowed to the session's owner (its creator, or the process that took the duty to remove
 * over); with `takeOver`, to any process once that owner is dead (it claims the duty first; a
 * rollback leaves the old container's duty with it). Anyone else gets
 * `E_SESSION_BUSY` (`reason: 'not-owner'`); of concurrent recreations exactly one proceeds (a
 * lock record, `berth-replace-<old id>`, is created compare-and-set), the others get
 * `E_SESSION_BUSY` (`'recreating'`, or `'taken-over'` for a lost take-over).
 *
 * What is lost: the old container's writable layer (files outside mounts), its processes, its
 * tmpfs mounts and anonymous volumes. What is kept: bind mounts (host paths) and named volumes
 * (mounted again at the same target unless the spec mounts something there). The handle's
 * `replaced` lists both.
 *
 * Steps: the image is made present first (a missing one is `E_IMAGE_NOT_FOUND` and nothing
 * changes); the old container is renamed aside (`<name>-replaced-<id12>`, an atomic engine
 * rename) and stopped; the new one is created under the session's name, started, set up and
 * verified against the spec (see {@link verifySession}); then a commit record is written and
 * the old container removed by id. Any failure or abort before the commit removes the new
 * container by id, renames the old one back and starts it again, then rejects with the first
 * cause. A process that dies at any step leaves records from which the next
 * `resumeSession`, `verifySession`, `recreateSession` on that name, or {@link reapOrphans},
 * finishes (after the commit) or rolls back (before it): exactly one container stays under
 * the name.
 *
 * Engine API: `GET /containers/{name}/json`, `GET /volumes?filters=…`, `POST /volumes/create`,
 * `POST /containers/{id}/rename`, `POST /containers/{id}/stop`, `POST /containers/create?name=…`,
 * `POST /containers/{id}/start`, execs, `DELETE /containers/{id}?force=true&v=true`.
 *
 * @param options The new container's create spec, `takeOver`, engine selection, pull options, `abortSignal`.
 * @returns A `created` handle on the new container, with `replaced` and `verification`.
 * @throws InvalidArgumentError `E_INVALID_ARGUMENT` for a bad option (or a bind source outside `mountRoots`), before any engine change.
 * @throws SessionNotFoundError `E_SESSION_NOT_FOUND`, ForeignContainerError `E_FOREIGN_CONTAINER`.
 * @throws SessionBusyError `E_SESSION_BUSY`: `'not-owner'`, `'recreating'`, `'taken-over'`, `'initialising'`.
 * @throws ImageNotFoundError `E_IMAGE_NOT_FOUND` (nothing changed).
 * @throws SetupFailedError `E_SETUP_FAILED`, VerifyFailedError `E_VERIFY_FAILED`, EngineError `E_ENGINE`: rolled back.
 * @throws AbortedError `E_ABORTED`: rolled back. EngineUnavailableError `E_ENGINE_UNAVAILABLE`.
 * @example
 * ```ts
 * import { recreateSession } from '@berth/core';
 *
 * const fresh = await recreateSession({ sessionId: 'agent-42', image: 'node:22', mounts: [{ source: '/srv/w', target: '/work' }] });
 * console.log(fresh.replaced?.lost); // [{ kind: 'writable-layer' }, { kind: 'processes' }, ...]
 * ```
 */
export async function recreateSession(options: RecreateSessionOptions): Promise<Session> {
  expectObject(options, 'options');
  const { abortSignal, engine, socketPath, connectTimeoutMs, platform, onPullProgress, takeOver, ...spec } = options;
  expectString(spec.sessionId, 'sessionId', { wellFormed: false });
  expectString(spec.image, 'image');
  expectOptionalString(platform, 'platform');
  expectOptionalBoolean(takeOver, 'takeOver');
  expectOptionalSignal(abortSignal, 'abortSignal');
  const onProgress = progressCallback(onPullProgress);
  const native = compact({
    ...toNativeSpec(spec),
    platform,
    ...engineOptions({ engine, socketPath, connectTimeoutMs }),
  }) as Parameters<NativeBinding['recreateSession']>[0];
  const session = await callNative(() =>
    withAbort(abortSignal, 'recreateSession', (token) =>
      loadBinding().recreateSession(native, takeOver, token, onProgress),
    ),
  );
  return new Session(session);
}
