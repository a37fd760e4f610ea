import type { DeathCause } from '../types';
import { BerthError, type BerthErrorOptions } from './berth-error';

const CODE = 'E_SESSION_DEAD';
const MARKER = `berth.error.${CODE}`;
const SYMBOL = Symbol.for(MARKER);

/** `details` of {@link SessionDeadError}. More keys may appear; these are stable. */
export interface SessionDeadDetails {
  /** The session id. */
  sessionId: string;
  /** The container name. */
  name: string;
  /** The container id. */
  id: string;
  /** What ended it: `oom-killed`, `exited`, `killed`, `engine-restarted` or `removed-outside`. */
  cause: DeathCause;
  /** The container's exit code; null when the container is gone. */
  exitCode: number | null;
  /** When it stopped (RFC 3339, as the engine wrote it); null when gone or unknown. */
  finishedAt: string | null;
  /** The tail of the container's log (stdout and stderr, lossy UTF-8, at most 4 KiB); empty when gone. */
  logTail: string;
  [key: string]: unknown;
}

/**
 * `E_SESSION_DEAD`: The session's container is not running (or is gone) and berth did not stop or remove it: the memory limit killed it, its init exited, a signal ended it, its engine restarted, or something outside berth removed it. `details.cause` says which (docs/operations.md "Cause of death").
 */
export class SessionDeadError extends BerthError<SessionDeadDetails> {
  /** @internal The `Symbol.for` brand that `isInstance` checks (across copies of the package). */
  protected readonly [SYMBOL] = true;
  /** The code every instance carries. */
  static readonly CODE = CODE;
  declare readonly code: typeof CODE;

  constructor(message: string, options: BerthErrorOptions<SessionDeadDetails> = {}) {
    super(CODE, message, options);
    this.name = 'SessionDeadError';
  }

  /** True when `error` is a {@link SessionDeadError}, from this copy of the package or any other. */
  static override isInstance(error: unknown): error is SessionDeadError {
    return BerthError.hasMarker(error, MARKER);
  }
}
