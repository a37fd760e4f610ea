import { BerthError, type BerthErrorOptions } from './berth-error';

const CODE = 'E_ENGINE_UNAVAILABLE';
const MARKER = `berth.error.${CODE}`;
const SYMBOL = Symbol.for(MARKER);

/** `details` of {@link EngineUnavailableError}. More keys may appear; these are stable. */
export interface EngineUnavailableDetails {
  /** Each endpoint tried, in order, with what happened. */
  tried: string;
  /** The last failure. */
  reason: string;
  /** The likely fix. */
  hint: string;
  [key: string]: unknown;
}

/**
 * `E_ENGINE_UNAVAILABLE`: No container engine answered: says which endpoints were tried and the likely fix.
 */
export class EngineUnavailableError extends BerthError<EngineUnavailableDetails> {
  /** @internal The `Symbol.for` brand that `isInstance` checks (across copies of the package). */
  protected readonly [SYMBOL] = true;
  /** The code every instance carries. */
  static readonly CODE = CODE;
  declare readonly code: typeof CODE;

  constructor(message: string, options: BerthErrorOptions<EngineUnavailableDetails> = {}) {
    super(CODE, message, options);
    this.name = 'EngineUnavailableError';
  }

  /** True when `error` is a {@link EngineUnavailableError}, from this copy of the package or any other. */
  static override isInstance(error: unknown): error is EngineUnavailableError {
    return BerthError.hasMarker(error, MARKER);
  }
}
