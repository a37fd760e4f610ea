export { containerName, DEFAULT_PREFIX } from './container-name';
export { createSession } from './create-session';
export { MAX_REMOVE_AFTER_STOP_MS } from './types';
export { engineInfo } from './engine-info';
export { ensureImage } from './ensure-image';
export {
  AbortedError,
  BerthError,
  EngineError,
  EngineUnavailableError,
  ERROR_CODES,
  ExecTimeoutError,
  ForeignContainerError,
  ImageNotFoundError,
  InvalidArgumentError,
  PermissionDeniedError,
  SessionBusyError,
  SessionExistsError,
  SessionIncompleteError,
  SessionNotFoundError,
  SetupFailedError,
  SpecDriftError,
  VerifyFailedError,
  type AbortedDetails,
  type BerthErrorOptions,
  type EngineDetails,
  type EngineUnavailableDetails,
  type ErrorCode,
  type ExecTimeoutDetails,
  type ForeignContainerDetails,
  type ImageNotFoundDetails,
  type InvalidArgumentDetails,
  type PermissionDeniedDetails,
  type SessionBusyDetails,
  type SessionExistsDetails,
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
export { listTemplates, pruneTemplates, removeTemplate, TEMPLATE_REPO, type TemplateInfo, type TemplateOptions } from './templates';
export type {
  CreateSessionOptions,
  FileAccess,
  CreateSpec,
  EngineInfo,
  EngineName,
  EngineOption,
  EngineOptions,
  EnsureImageOptions,
  Finding,
  FindingKind,
  ExecOptions,
  ExecResult,
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
  SessionScope,
  SessionState,
  SpawnOptions,
  StopOptions,
  StopResult,
  Verification,
  VerifySessionOptions,
  WriteFileOptions,
} from './types';
