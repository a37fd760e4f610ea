import { BerthError, type BerthErrorOptions } from './berth-error';

const CODE = 'E_INVALID_ARGUMENT';
const MARKER = `berth.error.${CODE}`;
const SYMBOL = Symbol.for(MARKER);

/** `details` of {@link InvalidArgumentError}. More keys may appear; these are stable. */
export interface InvalidArgumentDetails {
  /** The option or argument as the caller spelled it (`sessionId`, `ports[0]`). */
  field: string;
  /** Why it was rejected. */
  reason: string;
  [key: string]: unknown;
}

/**
 * `E_INVALID_ARGUMENT`: An argument was rejected before any engine call (wrong type, out of range, a session id with control characters or lone surrogates, an unknown engine name).
 */
export class InvalidArgumentError extends BerthError<InvalidArgumentDetails> {
  /** @internal The `Symbol.for` brand that `isInstance` checks (across copies of the package). */
  protected readonly [SYMBOL] = true;
  /** The code every instance carries. */
  static readonly CODE = CODE;
  declare readonly code: typeof CODE;

  constructor(message: string, options: BerthErrorOptions<InvalidArgumentDetails> = {}) {
    super(CODE, message, options);
    this.name = 'InvalidArgumentError';
  }

  /** True when `error` is a {@link InvalidArgumentError}, from this copy of the package or any other. */
  static override isInstance(error: unknown): error is InvalidArgumentError {
    return BerthError.hasMarker(error, MARKER);
  }
}
