import { BerthError, type BerthErrorOptions } from './berth-error';

const CODE = 'E_ABORTED';
const MARKER = `berth.error.${CODE}`;
const SYMBOL = Symbol.for(MARKER);

/** `details` of {@link AbortedError}. More keys may appear; these are stable. */
export interface AbortedDetails {
  /** The aborted operation. */
  operation: string;
  /** Exec output before the abort (exec only). */
  stdout?: Buffer;
  /** Exec error output before the abort (exec only). */
  stderr?: Buffer;
  [key: string]: unknown;
}

/**
 * `E_ABORTED`: The operation's `abortSignal` fired. Whatever berth created for it was removed by id; an exec's process tree was terminated, and its output so far is in `details`.
 */
export class AbortedError extends BerthError<AbortedDetails> {
  /** @internal The `Symbol.for` brand that `isInstance` checks (across copies of the package). */
  protected readonly [SYMBOL] = true;
  /** The code every instance carries. */
  static readonly CODE = CODE;
  declare readonly code: typeof CODE;

  constructor(message: string, options: BerthErrorOptions<AbortedDetails> = {}) {
    super(CODE, message, options);
    this.name = 'AbortedError';
  }

  /** True when `error` is a {@link AbortedError}, from this copy of the package or any other. */
  static override isInstance(error: unknown): error is AbortedError {
    return BerthError.hasMarker(error, MARKER);
  }
}
