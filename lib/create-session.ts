import { loadBinding } from './binding';
import { prepare, runCreate } from './prepare-create';
import type { Session } from './session';
import type { CreateSessionOptions } from './types';

/**
 * Creates a fresh session: a new container under the derived name, started, set up, ready.
 *
 * Fresh only: the engine's name uniqueness is the lock, so of concurrent creators of one
 * session id exactly one wins and the others get `E_SESSION_EXISTS`; nothing is ever adopted
 * (use {@link resumeSession} for that). The container keeps running under an init process
 * (zombies reaped) with a sleep entrypoint, publishes `ports` on 127.0.0.1 only, and applies
 * env, user, working directory, mounts and limits. Setup commands run in order (a string under
 * `sh -c`). Any failure after the container exists (setup exit code, abort, timeout) removes it
 * by id and rejects with the first cause; a failed removal is attached as `cause`.
 *
 * The returned session has `ownership: 'created'`: its `remove()` removes the container. The
 * duty to remove belongs to this process: a later `resumeSession` of this session in this
 * process returns a handle sharing it (also `'created'`; see {@link resumeSession}).
 * `removeAfterStopMs` (ms) makes a stopped session expire (see {@link CreateSessionOptions}).
 *
 * Pulls a missing image first (see {@link ensureImage}; `onPullProgress` observes it, `platform`
 * picks the image's platform). Engine API: `POST /images/create` (only when the image is missing), `POST /containers/create?name=…`,
 * `POST /containers/{id}/start`, then the setup commands over the session's command channel
 * (docs/design.md#exec; `PUT /containers/{id}/archive` and one exec), else per setup command
 * `POST /containers/{id}/exec`, `POST /exec/{id}/start`, `GET /exec/{id}/json`; on failure
 * `DELETE /containers/{id}?force=1&v=1`.
 *
 * @param options The create spec (see {@link CreateSessionOptions}); sizes in bytes; engine
 *   selection (`engine`, `socketPath`, `connectTimeoutMs`); pull options (`platform`, `onPullProgress`).
 * @returns The session handle.
 * @throws {BerthError} with a code listed in the core's `create_session` doc
 *   (crates/berth-core/src/lifecycle/create.rs); each code's class and `details`: docs/errors.md.
 * @example
 * ```ts
 * import { createSession } from '@berth/core';
 *
 * await using session = await createSession({
 *   sessionId: 'agent-42',
 *   image: 'node:20',
 *   workDir: '/work',
 *   setupCommands: ['mkdir -p /work'],
 * });
 * const { exitCode, stdout } = await session.exec(['node', '--version']);
 * ```
 */
export async function createSession(options: CreateSessionOptions): Promise<Session> {
  const prepared = prepare(options);
  return runCreate('createSession', prepared, (native, token, onProgress) =>
    loadBinding().createSession(native, token, onProgress),
  );
}
