import { containerName, DEFAULT_PREFIX, listSessions, peek, SessionNotFoundError, type EngineOptions, type SessionListing } from '../index';

/**
 * What `peek` and `listSessions` know about one session: the container as `peek` sees it, plus
 * its holders when berth manages it. Null when nothing holds the session's name.
 */
export async function lookUp(
  sessionId: string,
  prefix: string | undefined,
  engine: EngineOptions,
): Promise<SessionListing | null> {
  const seen = await peek(sessionId, { ...engine, prefix });
  if (!seen) return null;
  if (!seen.managed) return { ...seen, holders: [], dutyGeneration: 0 };
  const listed = await listSessions({ ...engine, prefix: prefix ?? DEFAULT_PREFIX });
  return listed.find((s) => s.id === seen.id) ?? { ...seen, holders: [], dutyGeneration: 0 };
}

/** `E_SESSION_NOT_FOUND` for a session id whose name nothing holds. */
export function notFound(sessionId: string, prefix: string | undefined): SessionNotFoundError {
  const name = containerName(sessionId, prefix ?? DEFAULT_PREFIX);
  return new SessionNotFoundError(`no container named ${name} (session '${sessionId}')`, { details: { sessionId, name } });
}
