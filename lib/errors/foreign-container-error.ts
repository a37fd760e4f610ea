import { BerthError, type BerthErrorOptions } from './berth-error';

const CODE = 'E_FOREIGN_CONTAINER';
const MARKER = `berth.error.${CODE}`;
const SYMBOL = Symbol.for(MARKER);

/** `details` of {@link ForeignContainerError}. More keys may appear; these are stable. */
export interface ForeignContainerDetails {
  /** The requested session id. */
  sessionId: string;
  /** The container name. */
  name: string;
  /** The foreign container's id. */
  id: string;
  /** Why it is considered foreign. */
  reason: string;
  [key: string]: unknown;
}

/**
 * `E_FOREIGN_CONTAINER`: A container holds the derived name but berth does not manage it for this session (no berth labels, or another session id). berth never stops or removes it.
 */
export class ForeignContainerError extends BerthError<ForeignContainerDetails> {
  /** @internal The `Symbol.for` brand that `isInstance` checks (across copies of the package). */
  protected readonly [SYMBOL] = true;
  /** The code every instance carries. */
  static readonly CODE = CODE;
  declare readonly code: typeof CODE;

  constructor(message: string, options: BerthErrorOptions<ForeignContainerDetails> = {}) {
    super(CODE, message, options);
    this.name = 'ForeignContainerError';
  }

  /** True when `error` is a {@link ForeignContainerError}, from this copy of the package or any other. */
  static override isInstance(error: unknown): error is ForeignContainerError {
    return BerthError.hasMarker(error, MARKER);
  }
}
