/**
 * The root API: create, resume, verify, recreate, list, peek and reap sandbox sessions; the
 * {@link Session} handle (commands, files, stop, remove); engines, images and templates; the
 * error classes by stable `code`. Guides: `docs/sessions.md` and the pages indexed in
 * `docs/README.md`.
 *
 * @module @berth/core
 */
export { bufferBudget, DEFAULT_BUFFER_BUDGET_BYTES, setBufferBudget, type BufferBudget } from './buffer-budget';
export { containerName, DEFAULT_PREFIX } from './container-name';
export { createSession } from './create-session';
export { DEFAULT_MAX_BUFFER_BYTES, DEFAULT_MAX_READ_BYTES, MAX_REMOVE_AFTER_STOP_MS } from './types';
export { engineInfo } from './engine-info';
export { ensureImage } from './ensure-image';
export {
  AbortedError,
  BerthError,
  EngineError,
  EngineUnavailableError,
  ERROR_CODES,
  ExecTimeoutError,
  FileTooLargeError,
  ForeignContainerError,
  ImageNotFoundError,
  InvalidArgumentError,
  NativeBindingError,
  PermissionDeniedError,
  NoSpaceError,
  SessionBusyError,
  SessionExistsError,
  SessionDeadError,
  SessionIncompleteError,
  SessionNotFoundError,
  SetupFailedError,
  SpecDriftError,
  VerifyFailedError,
  type AbortedDetails,
  type BerthErrorCode,
  type BerthErrorOf,
  type BerthErrorOptions,
  type EngineDetails,
  type EngineUnavailableDetails,
  type ErrorCode,
  type ExecTimeoutDetails,
  type FileTooLargeDetails,
  type ForeignContainerDetails,
  type ImageNotFoundDetails,
  type InvalidArgumentDetails,
  type KnownBerthError,
  type NativeBindingDetails,
  type PermissionDeniedDetails,
  type NoSpaceDetails,
  type SessionBusyDetails,
  type SessionExistsDetails,
  type SessionDeadDetails,
  type SessionIncompleteDetails,
  type SessionNotFoundDetails,
  type SetupFailedDetails,
  type SpecDriftDetails,
  type VerifyFailedDetails,
} from './errors/index';
export { listSessions } from './list-sessions';
export { peek } from './peek';
export { reapOrphans } from './reap-orphans';
export { recreateSession } from './recreate-session';
export { verifySession } from './verify-session';
export { resumeSession } from './resume-session';
export { ExecProcess } from './exec-process';
export type { ByteSource } from './file-stream';
export { Session } from './session';
export {
  listTemplates,
  pruneTemplates,
  removeTemplate,
  TEMPLATE_REPO,
  type PruneTemplatesOptions,
  type PruneTemplatesResult,
  type TemplateInfo,
  type TemplateOptions,
} from './templates';
export type {
  CreateSessionOptions,
  FileAccess,
  CreateSpec,
  EngineInfo,
  EngineName,
  EngineOption,
  EngineOptions,
  EnsureImageOptions,
  CallOptions,
  EngineInfoOptions,
  Finding,
  FindingKind,
  ExecOptions,
  ExecResult,
  ExecTextResult,
  Holder,
  HolderRole,
  ListSessionsOptions,
  Liveness,
  Mount,
  NetworkPolicy,
  Owner,
  Ownership,
  PeekOptions,
  PeekResult,
  PullOptions,
  PullProgress,
  ReadFileOptions,
  ReapEntry,
  ReapOptions,
  ReapReport,
  RecreateSessionOptions,
  Replaced,
  ReplacedItem,
  SettledReplacement,
  ReleaseResult,
  RemoveOptions,
  RemoveResult,
  ResumeSessionOptions,
  SessionListing,
  SessionMetrics,
  MetricsOptions,
  SessionScope,
  SessionState,
  SessionLifecycle,
  SessionDeath,
  DeathCause,
  SpawnOptions,
  StopOptions,
  StopResult,
  Verification,
  VerifySessionOptions,
  WriteFileOptions,
} from './types';
