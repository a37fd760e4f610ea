import { BerthError, type BerthErrorOptions } from './berth-error';

const CODE = 'E_PERMISSION_DENIED';
const MARKER = `berth.error.${CODE}`;
const SYMBOL = Symbol.for(MARKER);

/** `details` of {@link PermissionDeniedError}. More keys may appear; these are stable. */
export interface PermissionDeniedDetails {
  /** What was refused: `'read'` or `'write'`. */
  operation: string;
  /** The path, normalised. */
  path: string;
  /** The session's user, as `uid:gid`. */
  user: string;
  [key: string]: unknown;
}

/**
 * `E_PERMISSION_DENIED`: The session's user may not do this file operation: the kernel refused it for that user (permission on the file, or on a directory on the way), exactly as an `exec` as that user would be refused. Nothing was changed. `files: 'engine'` on createSession/resumeSession acts with the engine's privileges instead.
 */
export class PermissionDeniedError extends BerthError<PermissionDeniedDetails> {
  /** @internal The `Symbol.for` brand that `isInstance` checks (across copies of the package). */
  protected readonly [SYMBOL] = true;
  /** The code every instance carries. */
  static readonly CODE = CODE;
  declare readonly code: typeof CODE;

  constructor(message: string, options: BerthErrorOptions<PermissionDeniedDetails> = {}) {
    super(CODE, message, options);
    this.name = 'PermissionDeniedError';
  }

  /** True when `error` is a {@link PermissionDeniedError}, from this copy of the package or any other. */
  static override isInstance(error: unknown): error is PermissionDeniedError {
    return BerthError.hasMarker(error, MARKER);
  }
}
