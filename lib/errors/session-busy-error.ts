import type { PeekResult } from '../types';
import { BerthError, type BerthErrorOptions } from './berth-error';

const CODE = 'E_SESSION_BUSY';
const MARKER = `berth.error.${CODE}`;
const SYMBOL = Symbol.for(MARKER);

/** `details` of {@link SessionBusyError}. More keys may appear; these are stable. */
export interface SessionBusyDetails {
  /** The requested session id. */
  sessionId: string;
  /** The container name. */
  name: string;
  /** The container id. */
  id: string;
  /** Why it is busy, e.g. `'initialising'`. */
  reason: string;
  /** The owner that holds it, with liveness. */
  owner: PeekResult['owner'];
  [key: string]: unknown;
}

/**
 * `E_SESSION_BUSY`: The session is held by a live (or unknown) process: `exclusive` resume, a lost take-over race, or a session still initialising (`reason: 'initialising'`).
 */
export class SessionBusyError extends BerthError<SessionBusyDetails> {
  /** @internal The `Symbol.for` brand that `isInstance` checks (across copies of the package). */
  protected readonly [SYMBOL] = true;
  /** The code every instance carries. */
  static readonly CODE = CODE;
  declare readonly code: typeof CODE;

  constructor(message: string, options: BerthErrorOptions<SessionBusyDetails> = {}) {
    super(CODE, message, options);
    this.name = 'SessionBusyError';
  }

  /** True when `error` is a {@link SessionBusyError}, from this copy of the package or any other. */
  static override isInstance(error: unknown): error is SessionBusyError {
    return BerthError.hasMarker(error, MARKER);
  }
}
