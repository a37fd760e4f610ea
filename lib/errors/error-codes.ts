/**
 * The stable error codes (docs/design.md#errors). Every {@link BerthError} carries exactly one of them
 * in `code`; match on the code (or a subclass's `isInstance`), never on the message text.
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
] as const;

/** One of {@link ERROR_CODES}. */
export type ErrorCode = (typeof ERROR_CODES)[number];
