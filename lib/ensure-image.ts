import { loadBinding, type NativeBinding } from './binding';
import { engineOptions } from './engine-option';
import { withAbort } from './abort';
import { callNative } from './native-call';
import { progressCallback } from './pull-progress';
import { ENSURE_IMAGE_OPTION_KEYS, type EnsureImageOptions } from './types';
import { compact, expectOptionalOptions, expectOptionalSignal, expectOptionalString, expectString } from './validate';

/**
 * Makes sure `image` is present on the engine, pulling it when missing: what createSession
 * does first, done ahead of time (for example to show pull progress before a session is asked
 * for). A present image is left alone (no pull, no progress events). Credentials come from the
 * Docker config (`$DOCKER_CONFIG/config.json`, default `~/.docker/config.json`) as the `docker`
 * CLI reads it: the registry's `credHelpers` helper, its `auths` entry, then `credsStore`
 * (helpers run as `docker-credential-<name> get`); none found means an anonymous pull.
 *
 * Engine API: `GET /images/{image}/json`, then `POST /images/create?fromImage=…&tag=…&platform=…`.
 *
 * @param image Image reference, e.g. `'node:20'` or `'registry.example:5000/team/img:1'`
 *   (no tag means `latest`, never all tags).
 * @param options `platform`, `onPullProgress`, engine selection.
 * @throws {BerthError} with a code listed in the core's `ensure_image_at` doc
 *   (crates/berth-core/src/engine/); each code's class and `details`: docs/errors.md.
 * @example
 * ```ts
 * import { ensureImage } from '@berth/core';
 *
 * await ensureImage('node:20', {
 *   onPullProgress: ({ layer, current, total }) => console.log(layer, current, '/', total),
 * });
 * ```
 */
export async function ensureImage(image: string, options: EnsureImageOptions = {}): Promise<void> {
  expectString(image, 'image');
  expectOptionalOptions(options, 'options', ENSURE_IMAGE_OPTION_KEYS);
  expectOptionalString(options.platform, 'platform');
  expectOptionalSignal(options.abortSignal, 'abortSignal');
  const onProgress = progressCallback(options.onPullProgress);
  const native = compact({ platform: options.platform, ...engineOptions(options) }) as Parameters<
    NativeBinding['ensureImage']
  >[1];
  await callNative(() =>
    withAbort(options.abortSignal, 'ensureImage', (token) => loadBinding().ensureImage(image, native, token, onProgress)),
  );
}
