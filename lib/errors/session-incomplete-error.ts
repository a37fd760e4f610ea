import type { PeekResult } from '../types';
import { BerthError, type BerthErrorOptions } from './berth-error';

const CODE = 'E_SESSION_INCOMPLETE';
const MARKER = `berth.error.${CODE}`;
const SYMBOL = Symbol.for(MARKER);

/** `details` of {@link SessionIncompleteError}. More keys may appear; these are stable. */
export interface SessionIncompleteDetails {
  /** The requested session id. */
  sessionId: string;
  /** The container name. */
  name: string;
  /** The container id. */
  id: string;
  /** The dead creator. */
  owner: PeekResult['owner'];
  [key: string]: unknown;
}

/**
 * `E_SESSION_INCOMPLETE`: The session never finished its setup and its creator is dead; the reaper removes such containers.
 */
export class SessionIncompleteError extends BerthError<SessionIncompleteDetails> {
  /** @internal The `Symbol.for` brand that `isInstance` checks (across copies of the package). */
  protected readonly [SYMBOL] = true;
  /** The code every instance carries. */
  static readonly CODE = CODE;
  declare readonly code: typeof CODE;

  constructor(message: string, options: BerthErrorOptions<SessionIncompleteDetails> = {}) {
    super(CODE, message, options);
    this.name = 'SessionIncompleteError';
  }

  /** True when `error` is a {@link SessionIncompleteError}, from this copy of the package or any other. */
  static override isInstance(error: unknown): error is SessionIncompleteError {
    return BerthError.hasMarker(error, MARKER);
  }
}
