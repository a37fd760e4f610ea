import { BerthError, type BerthErrorOptions } from './berth-error';

const CODE = 'E_SESSION_NOT_FOUND';
const MARKER = `berth.error.${CODE}`;
const SYMBOL = Symbol.for(MARKER);

/** `details` of {@link SessionNotFoundError}. More keys may appear; these are stable. */
export interface SessionNotFoundDetails {
  /** The requested session id. */
  sessionId: string;
  /** The container name looked up. */
  name: string;
  [key: string]: unknown;
}

/**
 * `E_SESSION_NOT_FOUND`: resumeSession found no container under the derived name.
 */
export class SessionNotFoundError extends BerthError<SessionNotFoundDetails> {
  /** @internal The `Symbol.for` brand that `isInstance` checks (across copies of the package). */
  protected readonly [SYMBOL] = true;
  /** The code every instance carries. */
  static readonly CODE = CODE;
  declare readonly code: typeof CODE;

  constructor(message: string, options: BerthErrorOptions<SessionNotFoundDetails> = {}) {
    super(CODE, message, options);
    this.name = 'SessionNotFoundError';
  }

  /** True when `error` is a {@link SessionNotFoundError}, from this copy of the package or any other. */
  static override isInstance(error: unknown): error is SessionNotFoundError {
    return BerthError.hasMarker(error, MARKER);
  }
}
