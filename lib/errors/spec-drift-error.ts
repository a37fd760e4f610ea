import { BerthError, type BerthErrorOptions } from './berth-error';

const CODE = 'E_SPEC_DRIFT';
const MARKER = `berth.error.${CODE}`;
const SYMBOL = Symbol.for(MARKER);

/** `details` of {@link SpecDriftError}. More keys may appear; these are stable. */
export interface SpecDriftDetails {
  /** The requested session id. */
  sessionId: string;
  /** The container name. */
  name: string;
  /** The drifted create-spec fields (`image`, `env`, ...). */
  fields: string[];
  [key: string]: unknown;
}

/**
 * `E_SPEC_DRIFT`: resumeSession with `onDrift: 'error'` found fields that differ from the creation spec; nothing was adopted.
 */
export class SpecDriftError extends BerthError<SpecDriftDetails> {
  /** @internal The `Symbol.for` brand that `isInstance` checks (across copies of the package). */
  protected readonly [SYMBOL] = true;
  /** The code every instance carries. */
  static readonly CODE = CODE;
  declare readonly code: typeof CODE;

  constructor(message: string, options: BerthErrorOptions<SpecDriftDetails> = {}) {
    super(CODE, message, options);
    this.name = 'SpecDriftError';
  }

  /** True when `error` is a {@link SpecDriftError}, from this copy of the package or any other. */
  static override isInstance(error: unknown): error is SpecDriftError {
    return BerthError.hasMarker(error, MARKER);
  }
}
