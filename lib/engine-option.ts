import type { EngineOption, EngineOptions } from './types';
import { compact, expectOptionalNumber, expectOptionalObject, expectOptionalString, invalid } from './validate';

const ENGINE_NAMES = ['docker', 'podman'] as const;
const PLATFORMS = ['linux', 'darwin', 'win32'] as const;

function isEngineName(value: unknown): boolean {
  return typeof value === 'string' && (ENGINE_NAMES as readonly string[]).includes(value);
}

/** The engine selection as the native options take it. */
export interface NativeEngineOptions {
  engine?: string | Record<string, string>;
  socketPath?: string;
  connectTimeoutMs?: number;
}

/**
 * Checks `engine`, `socketPath` and `connectTimeoutMs` and returns them as the native
 * options expect them (a per-platform map without its `undefined` entries). The native core
 * resolves `engine` for this platform (precedence: docs/design.md#engines) and rejects an engine this
 * platform does not support.
 *
 * @throws InvalidArgumentError `E_INVALID_ARGUMENT` naming the valid values for an unknown
 * engine name or platform key.
 */
export function engineOptions(options: EngineOptions): NativeEngineOptions {
  const { engine, socketPath, connectTimeoutMs } = options;
  expectOptionalString(socketPath, 'socketPath');
  expectOptionalNumber(connectTimeoutMs, 'connectTimeoutMs'); // its range is the core's
  return compact({ engine: checkEngine(engine), socketPath, connectTimeoutMs });
}

function checkEngine(engine: EngineOption | undefined): string | Record<string, string> | undefined {
  if (engine === undefined || isEngineName(engine)) return engine as string | undefined;
  if (typeof engine === 'string') invalid('engine', `unknown engine '${engine}'; expected one of ${ENGINE_NAMES.join(', ')}`);
  expectOptionalObject(engine, 'engine');
  const map: Record<string, string> = {};
  for (const [platform, name] of Object.entries(engine as Record<string, unknown>)) {
    if (!(PLATFORMS as readonly string[]).includes(platform)) {
      invalid(`engine.${platform}`, `unknown platform; expected one of ${PLATFORMS.join(', ')}`);
    }
    if (name === undefined) continue;
    if (!isEngineName(name)) {
      invalid(`engine.${platform}`, `unknown engine ${JSON.stringify(name)}; expected one of ${ENGINE_NAMES.join(', ')}`);
    }
    map[platform] = name as string;
  }
  return map;
}
