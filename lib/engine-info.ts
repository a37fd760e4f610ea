import { loadBinding, type NativeBinding } from './binding';
import { engineOptions } from './engine-option';
import { withAbort } from './abort';
import { callNative } from './native-call';
import { ENGINE_CALL_OPTION_KEYS, type EngineInfo, type EngineInfoOptions } from './types';
import { expectOptionalOptions, expectOptionalSignal } from './validate';

/**
 * Describes the engine the options select, connecting to it as every operation would:
 * Docker or Podman, its version, the negotiated API version, the endpoint, and whether it runs
 * rootless or is remote. Useful to log at start-up and to check a setup.
 *
 * Engine API: `GET /version`, `GET /info`.
 *
 * @param options Engine selection (`engine`, `socketPath`, `connectTimeoutMs`).
 * @throws {BerthError} with a code listed in the core's `engine_info` doc
 *   (crates/berth-core/src/engine/); each code's class and `details`: docs/errors.md.
 * @example
 * ```ts
 * import { engineInfo } from '@berth/core';
 *
 * const { kind, version, endpoint } = await engineInfo({ engine: 'podman' });
 * ```
 */
export async function engineInfo(options: EngineInfoOptions = {}): Promise<EngineInfo> {
  expectOptionalOptions(options, 'options', ENGINE_CALL_OPTION_KEYS);
  expectOptionalSignal(options.abortSignal, 'abortSignal');
  const native = engineOptions(options) as Parameters<NativeBinding['engineInfo']>[0];
  return (await callNative(() =>
    withAbort(options.abortSignal, 'engineInfo', (token) => loadBinding().engineInfo(native, token)),
  )) as EngineInfo;
}
