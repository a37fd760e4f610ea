import type { AbortedError } from './aborted-error';
import type { EngineError } from './engine-error';
import type { EngineUnavailableError } from './engine-unavailable-error';
import type { BerthErrorCode } from './error-codes';
import type { ExecTimeoutError } from './exec-timeout-error';
import type { FileTooLargeError } from './file-too-large-error';
import type { ForeignContainerError } from './foreign-container-error';
import type { ImageNotFoundError } from './image-not-found-error';
import type { InvalidArgumentError } from './invalid-argument-error';
import type { NativeBindingError } from './native-binding-error';
import type { NoSpaceError } from './no-space-error';
import type { PermissionDeniedError } from './permission-denied-error';
import type { SessionBusyError } from './session-busy-error';
import type { SessionDeadError } from './session-dead-error';
import type { SessionExistsError } from './session-exists-error';
import type { SessionIncompleteError } from './session-incomplete-error';
import type { SessionNotFoundError } from './session-not-found-error';
import type { SetupFailedError } from './setup-failed-error';
import type { SpecDriftError } from './spec-drift-error';
import type { VerifyFailedError } from './verify-failed-error';

/**
 * Every error berth throws, as a union discriminated by `code`: after
 * {@link BerthError.isInstance}, a `switch (error.code)` narrows `details` to that code's shape.
 *
 * @example
 * ```ts
 * try {
 *   await createSession({ sessionId: 'agent-42', image: 'alpine:3' });
 * } catch (error) {
 *   if (!BerthError.isInstance(error)) throw error;
 *   switch (error.code) {
 *     case 'E_SESSION_EXISTS':
 *       console.log(error.details.owner?.liveness); // SessionExistsDetails
 *       break;
 *     case 'E_SESSION_BUSY':
 *       console.log(error.details.reason); // SessionBusyDetails
 *       break;
 *   }
 * }
 * ```
 */
export type KnownBerthError =
  | AbortedError
  | EngineError
  | EngineUnavailableError
  | ExecTimeoutError
  | FileTooLargeError
  | ForeignContainerError
  | ImageNotFoundError
  | InvalidArgumentError
  | NativeBindingError
  | NoSpaceError
  | PermissionDeniedError
  | SessionBusyError
  | SessionDeadError
  | SessionExistsError
  | SessionIncompleteError
  | SessionNotFoundError
  | SetupFailedError
  | SpecDriftError
  | VerifyFailedError;

/** The berth error class of one code, e.g. `BerthErrorOf<'E_SESSION_BUSY'>` is `SessionBusyError`. */
export type BerthErrorOf<C extends BerthErrorCode> = Extract<
  KnownBerthError,
  {
    /** The code whose class is picked. */
    code: C;
  }
>;
