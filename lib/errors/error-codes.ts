/**
 * The stable error codes (docs/errors.md). Every {@link BerthError} carries exactly one of them
 * in `code`; match on the code (or a subclass's `isInstance`), never on the message text.
 *
 * The core's `Error::code()` (`crates/berth-core/src/model/errors.rs`) is the source of every
 * code but `E_NATIVE_BINDING` (raised by the TypeScript layer only, when the native module cannot
 * be loaded); `__test__/package/error-codes.test.ts` fails on any difference.
 */
export const ERROR_CODES = [
  'E_INVALID_ARGUMENT',
  'E_ENGINE_UNAVAILABLE',
  'E_SESSION_EXISTS',
  'E_SESSION_NOT_FOUND',
  'E_FOREIGN_CONTAINER',
  'E_SESSION_BUSY',
  'E_SESSION_INCOMPLETE',
  'E_SESSION_DEAD',
  'E_SPEC_DRIFT',
  'E_VERIFY_FAILED',
  'E_IMAGE_NOT_FOUND',
  'E_SETUP_FAILED',
  'E_EXEC_TIMEOUT',
  'E_ABORTED',
  'E_PERMISSION_DENIED',
  'E_FILE_TOO_LARGE',
  'E_NO_SPACE',
  'E_ENGINE',
  'E_NATIVE_BINDING',
] as const;

/** Codes raised by the TypeScript layer only, never by the native core (it is not loaded then). */
export const JS_ONLY_ERROR_CODES = ['E_NATIVE_BINDING'] as const satisfies readonly ErrorCode[];

/** One of {@link ERROR_CODES}: the type of a known berth error's `code`. */
export type BerthErrorCode = (typeof ERROR_CODES)[number];

/** The former name of {@link BerthErrorCode}. */
export type ErrorCode = BerthErrorCode;
