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
  /** Index of the failing command in `setupCommands` (absent when the container was not running). */
  index?: number;
  /** Its argv (absent when the container was not running). */
  argv?: string[];
  /** The command's exit code, or the container's when it was not running. */
  exitCode: number;
  /** Its stdout, as reported by the native core (absent when the container was not running). */
  stdout?: unknown;
  /** Its stderr, as reported by the native core (absent when the container was not running). */
  stderr?: unknown;
  /** `'start'` or `'setup'`: when the container was found not running (absent for a failing command). */
  stage?: 'start' | 'setup';
  /** The state of a container that was not running, as `peek` reports it (`'exited'`, `'dead'`, ...; Podman's `stopped` is `'exited'`). */
  state?: string;
  /** The last 4 KiB of a not-running container's output (`GET /containers/{id}/logs`). */
  log?: string;
  /** The engine's message when it refused the start (an unknown user, an entrypoint it cannot run). */
  reason?: string;
  [key: string]: unknown;
}

/**
 * `E_SETUP_FAILED`: A setup command exited non-zero, or the container was not running after its start or its setup (its entrypoint or init exited: `details.stage`, `state`, `exitCode`, `log`); the container berth created for it was removed by id (a failed removal is attached as `cause`).
 */
export class SetupFailedError extends BerthError<SetupFailedDetails> {
  /** @internal The `Symbol.for` brand that `isInstance` checks (across copies of the package). */
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
