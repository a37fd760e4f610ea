import type { PeekResult } from '../types';
import { BerthError, type BerthErrorOptions } from './berth-error';

const CODE = 'E_SESSION_EXISTS';
const MARKER = `berth.error.${CODE}`;
const SYMBOL = Symbol.for(MARKER);

/** `details` of {@link SessionExistsError}. More keys may appear; these are stable. */
export interface SessionExistsDetails {
  /** The container name. */
  name: string;
  /** The id of the container holding it. */
  id: string;
  /** Its state (`'running'`, `'exited'`, ...). */
  state: string;
  /** Whether berth manages that container (false: somebody else's). */
  managed: boolean;
  /** The session id label of the container holding the name; null when berth does not manage it. */
  sessionId: string | null;
  /** The session id this createSession asked for. */
  requestedSessionId: string;
  /** Its creator as recorded in its labels, with liveness; null when unmanaged. */
  owner: PeekResult['owner'];
  [key: string]: unknown;
}

/**
 * `E_SESSION_EXISTS`: createSession found the derived container name taken. Nothing was adopted, started or removed; `details` say what holds the name.
 */
export class SessionExistsError extends BerthError<SessionExistsDetails> {
  /** @internal The `Symbol.for` brand that `isInstance` checks (across copies of the package). */
  protected readonly [SYMBOL] = true;
  /** The code every instance carries. */
  static readonly CODE = CODE;
  declare readonly code: typeof CODE;

  constructor(message: string, options: BerthErrorOptions<SessionExistsDetails> = {}) {
    super(CODE, message, options);
    this.name = 'SessionExistsError';
  }

  /** True when `error` is a {@link SessionExistsError}, from this copy of the package or any other. */
  static override isInstance(error: unknown): error is SessionExistsError {
    return BerthError.hasMarker(error, MARKER);
  }
}
