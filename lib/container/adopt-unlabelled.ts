import { withAbort } from '../abort';
import { loadBinding, type NativeBinding } from '../binding';
import { engineOptions } from '../engine-option';
import { callNative } from '../native-call';
import { Session } from '../session';
import type { CallOptions, EngineOptions } from '../types';
import { compact, expectOptionalSignal, expectString } from '../validate';
import { LEGACY_PREFIX } from './container-name';

/** Options of {@link adoptUnlabelled}. */
export interface AdoptUnlabelledOptions extends EngineOptions, CallOptions {
  /** The sandbox (session) id. */
  sessionId: string;
  /** The image the container must run. */
  image: string;
  /** Name prefix. @default 'please' */
  prefix?: string;
}

/**
 * Adopts the container the old `container.ts` made under the derived name: one without
 * berth's labels, whose image is `image` (by image id, or by the reference it was created
 * from). A stopped container is started, a paused one unpaused, by id. The session is
 * `adopted`: its `remove()` and `stop()` make no engine call.
 *
 * Engine API: `GET /containers/{name}/json`, `GET /images/{ref}/json`,
 * `POST /containers/{id}/start` or `/unpause`.
 *
 * @throws InvalidArgumentError `E_INVALID_ARGUMENT` before any engine call.
 * @throws SessionNotFoundError `E_SESSION_NOT_FOUND` when nothing holds the name.
 * @throws ForeignContainerError `E_FOREIGN_CONTAINER` when the container carries berth's labels, or runs another image.
 * @throws AbortedError `E_ABORTED` when `abortSignal` fires.
 * @throws EngineUnavailableError `E_ENGINE_UNAVAILABLE`, EngineError `E_ENGINE`.
 */
export async function adoptUnlabelled(options: AdoptUnlabelledOptions): Promise<Session> {
  const { sessionId, image, prefix = LEGACY_PREFIX, engine, socketPath, connectTimeoutMs, abortSignal } = options;
  expectString(sessionId, 'sessionId', { wellFormed: false });
  expectOptionalSignal(abortSignal, 'abortSignal');
  expectString(image, 'image');
  expectString(prefix, 'prefix', { wellFormed: false });
  const native = compact({
    sessionId,
    image,
    prefix,
    ...engineOptions({ engine, socketPath, connectTimeoutMs }),
  }) as Parameters<NativeBinding['adoptUnlabelled']>[0];
  return new Session(
    await callNative(() => withAbort(abortSignal, 'ready', (token) => loadBinding().adoptUnlabelled(native, token))),
  );
}
