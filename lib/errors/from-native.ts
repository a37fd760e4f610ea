import { AbortedError } from './aborted-error';
import { BerthError, type BerthErrorOptions } from './berth-error';
import { EngineError } from './engine-error';
import { EngineUnavailableError } from './engine-unavailable-error';
import type { ErrorCode } from './error-codes';
import { ExecTimeoutError } from './exec-timeout-error';
import { ForeignContainerError } from './foreign-container-error';
import { ImageNotFoundError } from './image-not-found-error';
import { InvalidArgumentError } from './invalid-argument-error';
import { NativeBindingError } from './native-binding-error';
import { NoSpaceError } from './no-space-error';
import { PermissionDeniedError } from './permission-denied-error';
import { FileTooLargeError } from './file-too-large-error';
import { SessionBusyError } from './session-busy-error';
import { SessionExistsError } from './session-exists-error';
import { SessionDeadError } from './session-dead-error';
import { SessionIncompleteError } from './session-incomplete-error';
import { SessionNotFoundError } from './session-not-found-error';
import { SetupFailedError } from './setup-failed-error';
import { SpecDriftError } from './spec-drift-error';
import { VerifyFailedError } from './verify-failed-error';

/** The prefix the native binding puts before the JSON of every error it reports. */
export const NATIVE_ERROR_MARKER = 'BERTH_ERROR ';

/** The JSON a native error carries after {@link NATIVE_ERROR_MARKER}. */
export interface NativeErrorPayload {
  code: string;
  message: string;
  details?: Record<string, unknown>;
  cause?: NativeErrorPayload;
}

/** Each subclass narrows `details`; the payload is trusted to match its code. */
type Subclass = new (message: string, options: BerthErrorOptions<never>) => BerthError<object>;

const CLASSES: Record<ErrorCode, Subclass> = {
  E_INVALID_ARGUMENT: InvalidArgumentError,
  E_ENGINE_UNAVAILABLE: EngineUnavailableError,
  E_SESSION_EXISTS: SessionExistsError,
  E_SESSION_NOT_FOUND: SessionNotFoundError,
  E_FOREIGN_CONTAINER: ForeignContainerError,
  E_SESSION_BUSY: SessionBusyError,
  E_SESSION_INCOMPLETE: SessionIncompleteError,
  E_SESSION_DEAD: SessionDeadError,
  E_SPEC_DRIFT: SpecDriftError,
  E_VERIFY_FAILED: VerifyFailedError,
  E_IMAGE_NOT_FOUND: ImageNotFoundError,
  E_SETUP_FAILED: SetupFailedError,
  E_EXEC_TIMEOUT: ExecTimeoutError,
  E_ABORTED: AbortedError,
  E_PERMISSION_DENIED: PermissionDeniedError,
  E_FILE_TOO_LARGE: FileTooLargeError,
  E_NO_SPACE: NoSpaceError,
  E_ENGINE: EngineError,
  E_NATIVE_BINDING: NativeBindingError,
};

/** Codes whose `details.stdout` / `details.stderr` arrive as base64 strings. */
const BASE64_OUTPUT_CODES: ReadonlySet<string> = new Set(['E_EXEC_TIMEOUT', 'E_ABORTED']);

/**
 * Builds the berth error a native payload describes: the subclass for its code (a code this
 * version does not know becomes a plain {@link BerthError} keeping that code), base64
 * `stdout`/`stderr` of exec failures decoded into Buffers, and a nested `cause` (a failed
 * cleanup) built the same way and set as `cause`.
 */
export function fromPayload(payload: NativeErrorPayload): BerthError {
  const details: Record<string, unknown> = { ...(payload.details ?? {}) };
  if (BASE64_OUTPUT_CODES.has(payload.code)) {
    for (const key of ['stdout', 'stderr']) {
      if (typeof details[key] === 'string') details[key] = Buffer.from(details[key], 'base64');
    }
  }
  const cause = isPayload(payload.cause) ? fromPayload(payload.cause) : undefined;
  const Class = Object.hasOwn(CLASSES, payload.code) ? CLASSES[payload.code as ErrorCode] : undefined;
  return Class
    ? (new Class(payload.message, { details: details as never, cause }) as BerthError)
    : new BerthError(payload.code, payload.message, { details, cause });
}

/**
 * Turns an error thrown by the native binding into a berth error.
 *
 * A native error's `message` is `"BERTH_ERROR "` followed by a {@link NativeErrorPayload}
 * as JSON. Anything else (a berth error already, a plain error without the marker, a
 * non-error) is returned unchanged: an unmarked native failure is a bug in berth and is
 * not disguised as an engine error.
 *
 * @param error What a native call threw or rejected with.
 * @returns The matching {@link BerthError} subclass, or `error` itself.
 */
export function fromNative(error: unknown): unknown {
  if (!(error instanceof Error) || BerthError.isInstance(error)) return error;
  if (!error.message.startsWith(NATIVE_ERROR_MARKER)) return error;
  let payload: unknown;
  try {
    payload = JSON.parse(error.message.slice(NATIVE_ERROR_MARKER.length));
  } catch {
    return error;
  }
  return isPayload(payload) ? fromPayload(payload) : error;
}

function isPayload(value: unknown): value is NativeErrorPayload {
  if (value == null || typeof value !== 'object') return false;
  const v = value as Record<string, unknown>;
  return (
    typeof v.code === 'string' &&
    typeof v.message === 'string' &&
    (v.details === undefined || (v.details !== null && typeof v.details === 'object' && !Array.isArray(v.details)))
  );
}
