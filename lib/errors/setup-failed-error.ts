import { BerthError, type BerthErrorOptions } from './berth-error';

const CODE = 'E_SETUP_FAILED';
const MARKER = `berth.error.${CODE}`;
const SYMBOL = Symbol.for(MARKER);

/** `details` of {@link SetupFailedError}. More keys may appear; these are stable. */
export interface SetupFailedDetails {
  /** The requested session id. */
  sessionId: string;
  /** The container name. */
  name: string;
  /** Index of the failing command in `setupCommands`. */
  index: number;
  /** Its argv. */
  argv: string[];
  /** Its exit code. */
  exitCode: number;
  /** Its stdout, as reported by the native core. */
  stdout: unknown;
  /** Its stderr, as reported by the native core. */
  stderr: unknown;
  [key: string]: unknown;
}

/**
 * `E_SETUP_FAILED`: A setup command exited non-zero; the container berth created for it was removed by id (a failed removal is attached as `cause`).
 */
export class SetupFailedError extends BerthError<SetupFailedDetails> {
  protected readonly [SYMBOL] = true;
  /** The code every instance carries. */
  static readonly CODE = CODE;
  declare readonly code: typeof CODE;

  constructor(message: string, options: BerthErrorOptions<SetupFailedDetails> = {}) {
    super(CODE, message, options);
    this.name = 'SetupFailedError';
  }

  /** True when `error` is a {@link SetupFailedError}, from this copy of the package or any other. */
  static override isInstance(error: unknown): error is SetupFailedError {
    return BerthError.hasMarker(error, MARKER);
  }
}
