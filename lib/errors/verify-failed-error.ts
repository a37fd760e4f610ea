import type { Finding } from '../types';
import { BerthError, type BerthErrorOptions } from './berth-error';

const CODE = 'E_VERIFY_FAILED';
const MARKER = `berth.error.${CODE}`;
const SYMBOL = Symbol.for(MARKER);

/** `details` of {@link VerifyFailedError}. More keys may appear; these are stable. */
export interface VerifyFailedDetails {
  /** The session id. */
  sessionId: string;
  /** The container name. */
  name: string;
  /** The container id verified. */
  id: string;
  /** Every finding: those repaired (`repaired: true`) and those left (at least one `hard`). */
  findings: Finding[];
  [key: string]: unknown;
}

/**
 * `E_VERIFY_FAILED`: verify (verifySession, resumeSession with `verify`, or the check of a
 * recreated container, then rolled back) found a hard finding that repair in place cannot fix.
 * `details.findings` lists them; `recreateSession` is the way out of most.
 */
export class VerifyFailedError extends BerthError<VerifyFailedDetails> {
  /** @internal The `Symbol.for` brand that `isInstance` checks (across copies of the package). */
  protected readonly [SYMBOL] = true;
  /** The code every instance carries. */
  static readonly CODE = CODE;
  declare readonly code: typeof CODE;

  constructor(message: string, options: BerthErrorOptions<VerifyFailedDetails> = {}) {
    super(CODE, message, options);
    this.name = 'VerifyFailedError';
  }

  /** True when `error` is a {@link VerifyFailedError}, from this copy of the package or any other. */
  static override isInstance(error: unknown): error is VerifyFailedError {
    return BerthError.hasMarker(error, MARKER);
  }
}
