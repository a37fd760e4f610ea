import type * as Native from '../binding';

/** The generated napi binding (`binding.js` / `binding.d.ts` at the package root). */
export type NativeBinding = typeof Native;

/** The native session class the binding returns. */
export type NativeSession = Native.BindingSession;

/** The native cancellation token class. */
export type NativeCancelToken = Native.CancelToken;

let cached: NativeBinding | undefined;

/**
 * Loads the generated binding once, on first use, so that the error classes and
 * {@link fromNative} work even where the native module is not built.
 *
 * @throws Error when `binding.js` is missing, saying to run `npm run build`.
 */
export function loadBinding(): NativeBinding {
  if (cached) return cached;
  try {
    cached = require('../binding.js') as NativeBinding;
  } catch (error) {
    if (isMissing(error, 'binding.js')) {
      throw new Error(
        '@berth/core: the native binding (binding.js at the package root) is missing. ' +
          'Run `npm run build` (it needs a Rust toolchain) in the package directory.',
        { cause: error },
      );
    }
    throw error;
  }
  return cached;
}

function isMissing(error: unknown, file: string): boolean {
  return (
    error instanceof Error &&
    (error as NodeJS.ErrnoException).code === 'MODULE_NOT_FOUND' &&
    error.message.includes(file)
  );
}
