import { withAbort } from './abort';
import { loadBinding, type NativeBinding } from './binding';
import { toNativeSpec } from './create-spec';
import { engineOptions } from './engine-option';
import { callNative } from './native-call';
import { Session } from './session';
import { MAX_REMOVE_AFTER_STOP_MS, type CreateSessionOptions } from './types';
import { progressCallback } from './pull-progress';
import {
  compact,
  expectObject,
  expectOptionalNumber,
  expectOptionalSignal,
  expectOptionalString,
  expectString,
} from './validate';

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
 * `POST /containers/{id}/start`, then per setup command `POST /containers/{id}/exec`,
 * `POST /exec/{id}/start`, `GET /exec/{id}/json`; on failure `DELETE /containers/{id}?force=1&v=1`.
 *
 * @param options The create spec (see {@link CreateSessionOptions}); sizes in bytes; engine
 *   selection (`engine`, `socketPath`, `connectTimeoutMs`); pull options (`platform`, `onPullProgress`).
 * @returns The session handle.
 * @throws InvalidArgumentError `E_INVALID_ARGUMENT` for a bad option, before any engine call.
 * @throws SessionExistsError `E_SESSION_EXISTS` when the name is taken; `details` say by what.
 * @throws ImageNotFoundError `E_IMAGE_NOT_FOUND` when the image is neither local nor pullable.
 * @throws SetupFailedError `E_SETUP_FAILED` when a setup command exits non-zero.
 * @throws AbortedError `E_ABORTED` when `abortSignal` fires.
 * @throws EngineUnavailableError `E_ENGINE_UNAVAILABLE`, EngineError `E_ENGINE`.
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
  expectObject(options, 'options');
  const { abortSignal, engine, socketPath, connectTimeoutMs, platform, onPullProgress, removeAfterStopMs, ...spec } =
    options;
  expectString(spec.sessionId, 'sessionId', { wellFormed: false });
  expectOptionalNumber(removeAfterStopMs, 'removeAfterStopMs', { min: 0, max: MAX_REMOVE_AFTER_STOP_MS });
  expectString(spec.image, 'image');
  expectOptionalString(platform, 'platform');
  expectOptionalSignal(abortSignal, 'abortSignal');
  const onProgress = progressCallback(onPullProgress);
  const native = compact({
    ...toNativeSpec(spec),
    platform,
    removeAfterStopMs,
    ...engineOptions({ engine, socketPath, connectTimeoutMs }),
  }) as Parameters<NativeBinding['createSession']>[0];
  const session = await callNative(() =>
    withAbort(abortSignal, 'createSession', (token) =>
      loadBinding().createSession(native, token, onProgress),
    ),
  );
  return new Session(session);
}
