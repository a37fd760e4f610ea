import { BerthError, type BerthErrorOptions } from './berth-error';

const CODE = 'E_ENGINE';
const MARKER = `berth.error.${CODE}`;
const SYMBOL = Symbol.for(MARKER);

/** `details` of {@link EngineError}. More keys may appear; these are stable. */
export interface EngineDetails {
  /** What berth was doing. */
  operation: string;
  /** The HTTP status the engine answered (0 when there was none). */
  status: number;
  /** The engine's message. */
  message: string;
  [key: string]: unknown;
}

/**
 * `E_ENGINE`: Any other engine failure, with its HTTP status.
 */
export class EngineError extends BerthError<EngineDetails> {
  /** @internal The `Symbol.for` brand that `isInstance` checks (across copies of the package). */
  protected readonly [SYMBOL] = true;
  /** The code every instance carries. */
  static readonly CODE = CODE;
  declare readonly code: typeof CODE;

  constructor(message: string, options: BerthErrorOptions<EngineDetails> = {}) {
    super(CODE, message, options);
    this.name = 'EngineError';
  }

  /** True when `error` is a {@link EngineError}, from this copy of the package or any other. */
  static override isInstance(error: unknown): error is EngineError {
    return BerthError.hasMarker(error, MARKER);
  }
}
