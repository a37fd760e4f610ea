import { BerthError, type BerthErrorOptions } from './berth-error';

const CODE = 'E_NO_SPACE';
const MARKER = `berth.error.${CODE}`;
const SYMBOL = Symbol.for(MARKER);

/** `details` of {@link NoSpaceError}. More keys may appear; these are stable. */
export interface NoSpaceDetails {
  /** The path written, normalised (`'(host spool file)'` when the host's own temporary directory was full). */
  path: string;
  /** The size of the write, in bytes. */
  bytes: number;
  /** Always `'ENOSPC'`. */
  errno: 'ENOSPC';
  /** What failed: the tool's or the engine's message, or that the temporary file came out short. */
  message: string;
  [key: string]: unknown;
}

/**
 * `E_NO_SPACE`: A write found no room for all its bytes (`ENOSPC`, a full filesystem): a tool or the engine said so, or the temporary file came out shorter than the data sent (busybox's tools exit 0 on a full disk). The temporary file is removed and the old file is intact (the one exception: a file written in place, see `writeFile`).
 */
export class NoSpaceError extends BerthError<NoSpaceDetails> {
  /** @internal The `Symbol.for` brand that `isInstance` checks (across copies of the package). */
  protected readonly [SYMBOL] = true;
  /** The code every instance carries. */
  static readonly CODE = CODE;
  declare readonly code: typeof CODE;

  constructor(message: string, options: BerthErrorOptions<NoSpaceDetails> = {}) {
    super(CODE, message, options);
    this.name = 'NoSpaceError';
  }

  /** True when `error` is a {@link NoSpaceError}, from this copy of the package or any other. */
  static override isInstance(error: unknown): error is NoSpaceError {
    return BerthError.hasMarker(error, MARKER);
  }
}
