import { existsSync } from 'node:fs';
import * as path from 'node:path';
import type * as Native from '../binding';
import { NativeBindingError, type NativeBindingDetails } from './errors/native-binding-error';

/** The generated napi binding (`binding.js` / `binding.d.ts` at the package root). */
export type NativeBinding = typeof Native;

/** The native session class the binding returns. */
export type NativeSession = Native.BindingSession;

/** The native cancellation token class. */
export type NativeCancelToken = Native.CancelToken;

/** The package root: `binding.js`, `package.json` and a locally built `.node` file sit there. */
const ROOT = path.join(__dirname, '..');

let cached: NativeBinding | undefined;

/**
 * Loads the generated binding once, on first use, so that the error classes and
 * {@link fromNative} work even where the native module is not built.
 *
 * Before loading, when no native module was built into the package root, the platform package
 * (`@berth/core-<target>`, an optional dependency) must be the same version as `@berth/core`:
 * a native module of another version is never loaded.
 *
 * @throws NativeBindingError (`E_NATIVE_BINDING`) when `binding.js` is missing (a source checkout
 *   not built: run `npm run build`), when no native module for this platform can be loaded (the
 *   platform package is not installed), or when the platform package is another version; the
 *   message names the package and the fix, `cause` keeps the loader's own error.
 */
export function loadBinding(): NativeBinding {
  if (cached) return cached;
  const target = nativeTarget(process.platform, process.arch, isMusl());
  const details: NativeBindingDetails = {
    target,
    package: `@berth/core-${target}`,
    reason: 'missing',
    expectedVersion: ownVersion(),
  };
  if (!existsSync(path.join(ROOT, `berth.${target}.node`))) {
    const found = platformPackageVersion(details.package);
    if (found !== undefined && found !== details.expectedVersion) {
      throw new NativeBindingError(
        `@berth/core ${details.expectedVersion} needs ${details.package} ${details.expectedVersion}, ` +
          `but ${found} is installed. Install the matching version: npm install ${details.package}@${details.expectedVersion}`,
        { details: { ...details, reason: 'version-mismatch', foundVersion: found } },
      );
    }
  }
  try {
    cached = require('../binding.js') as NativeBinding;
  } catch (error) {
    if (isMissing(error, 'binding.js')) {
      throw new NativeBindingError(
        '@berth/core: the native binding (binding.js at the package root) is missing. ' +
          'Run `npm run build` (it needs a Rust toolchain) in the package directory.',
        { details, cause: error },
      );
    }
    throw new NativeBindingError(
      `@berth/core: no native module for ${target} could be loaded: ${details.package} is not installed ` +
        '(npm skips optional dependencies when a lockfile was made on another platform, npm/cli#4828). ' +
        `Install it: npm install ${details.package}@${details.expectedVersion} ` +
        '(or remove node_modules and package-lock.json and run npm install again). ' +
        `Platforms with a native module: linux-x64-gnu, linux-arm64-gnu, linux-x64-musl, darwin-x64, darwin-arm64, win32-x64-msvc.`,
      { details, cause: error },
    );
  }
  return cached;
}

/**
 * The napi-rs target name of a platform, as the platform packages are named
 * (`@berth/core-<target>`): e.g. `linux-x64-gnu`, `linux-x64-musl`, `darwin-arm64`,
 * `win32-x64-msvc`. Pure; a platform berth does not build for still gets its name.
 */
export function nativeTarget(platform: string, arch: string, musl: boolean): string {
  if (platform === 'linux') return `linux-${arch}-${musl ? 'musl' : 'gnu'}`;
  if (platform === 'win32') return `win32-${arch}-msvc`;
  return `${platform}-${arch}`;
}

function isMusl(): boolean {
  if (process.platform !== 'linux') return false;
  const report = process.report?.getReport() as { header?: { glibcVersionRuntime?: string } } | undefined;
  return report?.header?.glibcVersionRuntime === undefined;
}

function ownVersion(): string {
  return (require('../package.json') as { version: string }).version;
}

/** The installed version of the platform package, or undefined when it is not installed. */
function platformPackageVersion(name: string): string | undefined {
  try {
    return (require(`${name}/package.json`) as { version?: string }).version;
  } catch {
    return undefined;
  }
}

function isMissing(error: unknown, file: string): boolean {
  return (
    error instanceof Error &&
    (error as NodeJS.ErrnoException).code === 'MODULE_NOT_FOUND' &&
    error.message.includes(file)
  );
}
