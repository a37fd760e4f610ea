import { BerthError, type BerthErrorOptions } from './berth-error';

const CODE = 'E_NATIVE_BINDING';
const MARKER = `berth.error.${CODE}`;
const SYMBOL = Symbol.for(MARKER);

/** `details` of {@link NativeBindingError}. More keys may appear; these are stable. */
export interface NativeBindingDetails {
  /** The napi-rs target of this platform, e.g. `'linux-x64-gnu'`. */
  target: string;
  /** The platform package that carries the native module for it, e.g. `'@berth/core-linux-x64-gnu'`. */
  package: string;
  /** `'missing'`: no native module could be loaded; `'version-mismatch'`: the platform package is another version than `@berth/core`. */
  reason: 'missing' | 'version-mismatch';
  /** The version of `@berth/core`. */
  expectedVersion: string;
  /** The version of the platform package found, when one was found. */
  foundVersion?: string;
  [key: string]: unknown;
}

/**
 * `E_NATIVE_BINDING`: berth's native module cannot be used on this machine: the platform package
 * for this platform is not installed (an optional dependency npm skipped), or it is another version
 * than `@berth/core`. The message names the package and the command that fixes it. Raised in
 * JavaScript before any native call (the native module never raises it).
 */
export class NativeBindingError extends BerthError<NativeBindingDetails> {
  /** @internal The `Symbol.for` brand that `isInstance` checks (across copies of the package). */
  protected readonly [SYMBOL] = true;
  /** The code every instance carries. */
  static readonly CODE = CODE;
  declare readonly code: typeof CODE;

  constructor(message: string, options: BerthErrorOptions<NativeBindingDetails> = {}) {
    super(CODE, message, options);
    this.name = 'NativeBindingError';
  }

  /** True when `error` is a {@link NativeBindingError}, from this copy of the package or any other. */
  static override isInstance(error: unknown): error is NativeBindingError {
    return BerthError.hasMarker(error, MARKER);
  }
}
