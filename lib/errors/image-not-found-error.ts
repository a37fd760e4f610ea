import { BerthError, type BerthErrorOptions } from './berth-error';

const CODE = 'E_IMAGE_NOT_FOUND';
const MARKER = `berth.error.${CODE}`;
const SYMBOL = Symbol.for(MARKER);

/** `details` of {@link ImageNotFoundError}. More keys may appear; these are stable. */
export interface ImageNotFoundDetails {
  /** The image reference. */
  image: string;
  /** What the engine answered. */
  reason: string;
  [key: string]: unknown;
}

/**
 * `E_IMAGE_NOT_FOUND`: The image is neither local nor pullable.
 */
export class ImageNotFoundError extends BerthError<ImageNotFoundDetails> {
  /** @internal The `Symbol.for` brand that `isInstance` checks (across copies of the package). */
  protected readonly [SYMBOL] = true;
  /** The code every instance carries. */
  static readonly CODE = CODE;
  declare readonly code: typeof CODE;

  constructor(message: string, options: BerthErrorOptions<ImageNotFoundDetails> = {}) {
    super(CODE, message, options);
    this.name = 'ImageNotFoundError';
  }

  /** True when `error` is a {@link ImageNotFoundError}, from this copy of the package or any other. */
  static override isInstance(error: unknown): error is ImageNotFoundError {
    return BerthError.hasMarker(error, MARKER);
  }
}
