import type { ErrorCode } from './error-codes';
import type { KnownBerthError } from './known-berth-error';

const MARKER = 'berth.error';
const SYMBOL = Symbol.for(MARKER);

/** Options shared by every berth error constructor. */
export interface BerthErrorOptions<D extends object = Record<string, unknown>> {
  /** Machine-readable facts about the failure (session id, container name, HTTP status, ...). */
  details?: D;
  /** The error behind this one, e.g. a failed cleanup attached to the first failure. */
  cause?: unknown;
}

/**
 * Base class of every error berth throws or rejects with.
 *
 * `code` is stable (docs/errors.md) and `details` is a plain object whose shape depends on the code.
 * A failed cleanup never replaces the first error: it is attached as `cause`.
 *
 * Use {@link BerthError.isInstance} rather than `instanceof`: it is true for errors created
 * by another copy of `@berth/core` too (duplicate installs), through a `Symbol.for` marker.
 */
export class BerthError<D extends object = Record<string, unknown>> extends Error {
  /** @internal The `Symbol.for` brand that `isInstance` checks (across copies of the package). */
  protected readonly [SYMBOL] = true;

  /** The stable code (docs/errors.md), e.g. `'E_SESSION_EXISTS'`; a native code unknown to this version is kept as is. */
  readonly code: ErrorCode | (string & {});
  /** Machine-readable facts about the failure; never contains an env value. */
  readonly details: D;
  /** The error behind this one (a failed cleanup, a native error), if any. */
  declare readonly cause?: unknown;

  /**
   * @param code A stable code (docs/errors.md).
   * @param message Human-readable; names the session and container, never an env value.
   * @param options `details` (defaults to `{}`) and `cause`.
   */
  constructor(code: ErrorCode | (string & {}), message: string, options: BerthErrorOptions<D> = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'BerthError';
    this.code = code;
    this.details = options.details ?? ({} as D);
  }

  /**
   * True when `error` is a berth error, from this copy of the package or any other. It narrows to
   * {@link KnownBerthError}, so a `switch (error.code)` narrows `details` too. (A code this version
   * does not know, from a newer native module, arrives as a plain `BerthError` with that code.)
   */
  static isInstance(error: unknown): error is KnownBerthError {
    return BerthError.hasMarker(error, MARKER);
  }

  /**
   * True when `error` carries the `Symbol.for(marker)` brand. Subclasses pass their own marker.
   * @internal
   */
  protected static hasMarker(error: unknown, marker: string): boolean {
    const symbol = Symbol.for(marker);
    return (
      error != null &&
      typeof error === 'object' &&
      symbol in error &&
      (error as Record<symbol, unknown>)[symbol] === true
    );
  }
}
