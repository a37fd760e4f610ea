import { loadBinding } from './binding';
import { prepare, runCreate } from './prepare-create';
import type { Session } from './session';
import { RECREATE_SESSION_OPTION_KEYS, type RecreateSessionOptions } from './types';
import { expectOptionalBoolean, expectOptions } from './validate';

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
 * @throws {BerthError} with a code listed in the core's `recreate_session` doc
 *   (crates/berth-core/src/lifecycle/recreate.rs); each code's class and `details`: docs/errors.md.
 * @example
 * ```ts
 * import { recreateSession } from '@berth/core';
 *
 * const fresh = await recreateSession({ sessionId: 'agent-42', image: 'node:22', mounts: [{ source: '/srv/w', target: '/work' }] });
 * console.log(fresh.replaced?.lost); // [{ kind: 'writable-layer' }, { kind: 'processes' }, ...]
 * ```
 */
export async function recreateSession(options: RecreateSessionOptions): Promise<Session> {
  expectOptions(options, 'options', RECREATE_SESSION_OPTION_KEYS);
  const { takeOver, ...create } = options;
  const prepared = prepare(create);
  expectOptionalBoolean(takeOver, 'takeOver');
  return runCreate('recreateSession', prepared, (native, token, onProgress) =>
    loadBinding().recreateSession(native, takeOver, token, onProgress),
  );
}
