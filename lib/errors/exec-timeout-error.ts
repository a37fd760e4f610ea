import { BerthError, type BerthErrorOptions } from './berth-error';

const CODE = 'E_EXEC_TIMEOUT';
const MARKER = `berth.error.${CODE}`;
const SYMBOL = Symbol.for(MARKER);

/** `details` of {@link ExecTimeoutError}. More keys may appear; these are stable. */
export interface ExecTimeoutDetails {
  /** The container name. */
  container: string;
  /** The deadline that passed, in milliseconds. */
  timeoutMs: number;
  /** Output before the deadline. */
  stdout: Buffer;
  /** Error output before the deadline. */
  stderr: Buffer;
  [key: string]: unknown;
}

/**
 * `E_EXEC_TIMEOUT`: An exec ran past `timeoutMs`: its process tree is terminated inside the container right after (in the background). No exit code is made up; the output so far is in `details`.
 */
export class ExecTimeoutError extends BerthError<ExecTimeoutDetails> {
  /** @internal The `Symbol.for` brand that `isInstance` checks (across copies of the package). */
  protected readonly [SYMBOL] = true;
  /** The code every instance carries. */
  static readonly CODE = CODE;
  declare readonly code: typeof CODE;

  constructor(message: string, options: BerthErrorOptions<ExecTimeoutDetails> = {}) {
    super(CODE, message, options);
    this.name = 'ExecTimeoutError';
  }

  /** True when `error` is a {@link ExecTimeoutError}, from this copy of the package or any other. */
  static override isInstance(error: unknown): error is ExecTimeoutError {
    return BerthError.hasMarker(error, MARKER);
  }
}
