import { BerthError, type BerthErrorOptions } from './berth-error';

const CODE = 'E_FILE_TOO_LARGE';
const MARKER = `berth.error.${CODE}`;
const SYMBOL = Symbol.for(MARKER);

/** `details` of {@link FileTooLargeError}. More keys may appear; these are stable. */
export interface FileTooLargeDetails {
  /** The path, normalised. */
  path: string;
  /** The file's size in bytes, when the read learnt it before its cap (absent otherwise). */
  size?: number;
  /** The cap the read had, in bytes (`maxBytes`). */
  maxBytes: number;
  [key: string]: unknown;
}

/**
 * `E_FILE_TOO_LARGE`: A buffered read (`readFile`, the harness's file reads) found the file larger than its `maxBytes` cap (default 64 MiB). The host stopped reading at the cap and returned nothing; pass a larger `maxBytes` or stream the file with `openFile`.
 */
export class FileTooLargeError extends BerthError<FileTooLargeDetails> {
  /** @internal The `Symbol.for` brand that `isInstance` checks (across copies of the package). */
  protected readonly [SYMBOL] = true;
  /** The code every instance carries. */
  static readonly CODE = CODE;
  declare readonly code: typeof CODE;

  constructor(message: string, options: BerthErrorOptions<FileTooLargeDetails> = {}) {
    super(CODE, message, options);
    this.name = 'FileTooLargeError';
  }

  /** True when `error` is a {@link FileTooLargeError}, from this copy of the package or any other. */
  static override isInstance(error: unknown): error is FileTooLargeError {
    return BerthError.hasMarker(error, MARKER);
  }
}
