// ESM entry: the named exports of the CommonJS build (one module instance for both).
import { createRequire } from 'node:module';

const cjs = createRequire(import.meta.url)('./index.js');

export const {
  AbortedError,
  BerthError,
  DEFAULT_PREFIX,
  ERROR_CODES,
  EngineError,
  ExecProcess,
  EngineUnavailableError,
  ExecTimeoutError,
  ForeignContainerError,
  ImageNotFoundError,
  InvalidArgumentError,
  Session,
  SessionBusyError,
  SessionExistsError,
  SessionIncompleteError,
  SessionNotFoundError,
  SetupFailedError,
  SpecDriftError,
  TEMPLATE_REPO,
  containerName,
  createSession,
  engineInfo,
  ensureImage,
  listSessions,
  listTemplates,
  peek,
  pruneTemplates,
  reapOrphans,
  removeTemplate,
  resumeSession,
} = cjs;
