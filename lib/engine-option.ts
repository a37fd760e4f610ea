import type { EngineOption, EngineOptions } from './types';
import { compact, expectOptionalObject, expectOptionalString, invalid } from './validate';

const ENGINE_NAMES = ['docker', 'podman'] as const;
const PLATFORMS = ['linux', 'darwin', 'win32'] as const;

function isEngineName(value: unknown): boolean {
  return typeof value === 'string' && (ENGINE_NAMES as readonly string[]).includes(value);
}

/**
 * Checks `engine` and `socketPath` and returns them as the native options expect them.
 * `engine` is passed through as given; the native core resolves it (SPEC §4 precedence).
 *
 * @throws InvalidArgumentError `E_INVALID_ARGUMENT` naming the valid values for an unknown
 * engine name or platform key.
 */
export function engineOptions(options: EngineOptions): { engine?: EngineOption; socketPath?: string } {
  const { engine, socketPath } = options;
  expectOptionalString(socketPath, 'socketPath');
  if (engine !== undefined && !isEngineName(engine)) {
    if (typeof engine === 'string') invalid('engine', `unknown engine '${engine}'; expected one of ${ENGINE_NAMES.join(', ')}`);
    expectOptionalObject(engine, 'engine');
    for (const [platform, name] of Object.entries(engine)) {
      if (!(PLATFORMS as readonly string[]).includes(platform)) {
        invalid(`engine.${platform}`, `unknown platform; expected one of ${PLATFORMS.join(', ')}`);
      }
      if (name !== undefined && !isEngineName(name)) {
        invalid(`engine.${platform}`, `unknown engine ${JSON.stringify(name)}; expected one of ${ENGINE_NAMES.join(', ')}`);
      }
    }
  }
  return compact({ engine, socketPath });
}
