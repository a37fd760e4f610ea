import { containerName, DEFAULT_PREFIX, listSessions, peek, SessionNotFoundError, type EngineOptions, type SessionListing } from '../index';

/** What {@link lookUp} found: the session, and the session id and prefix to resume it by. */
export interface Found {
  session: SessionListing;
  /** The session id (the argument itself, or the one the named container carries). */
  sessionId: string;
  /** The name prefix its container name was made with. */
  prefix: string;
}

/**
 * What `peek` and `listSessions` know about one session, found by its session id or, failing
 * that, by its container name (the NAME column of `ls`): the container as `peek` sees it, plus
 * its holders when berth manages it. A session id wins over a container name. Null when
 * neither finds anything. Reads only.
 *
 * Engine calls: `peek` (`GET /containers/{name}/json`), `listSessions` (by name: every session,
 * unmanaged containers under berth names included).
 */
export async function lookUp(arg: string, prefix: string | undefined, engine: EngineOptions): Promise<Found | null> {
  const p = prefix ?? DEFAULT_PREFIX;
  const seen = await peek(arg, { ...engine, prefix: p });
  if (seen) {
    if (!seen.managed) return { session: { ...seen, holders: [], dutyGeneration: 0 }, sessionId: arg, prefix: p };
    const listed = await listSessions({ ...engine, prefix: p });
    const session = listed.find((s) => s.id === seen.id) ?? { ...seen, holders: [], dutyGeneration: 0 };
    return { session, sessionId: arg, prefix: p };
  }
  // Only a name of berth's shape (`<prefix>-<id>-<8 hex digits>`) can be one: no listing otherwise.
  const name = arg.replace(/^\//, '');
  if (!/^.+-.+-[0-9a-f]{8}$/.test(name)) return null;
  const byName = (await listSessions({ ...engine, includeUnmanaged: true })).find((s) => s.name === name);
  if (!byName) return null;
  const sessionId = byName.sessionId ?? arg;
  return { session: byName, sessionId, prefix: prefixOf(byName.name, sessionId, p) };
}

/**
 * The prefix `name` was derived with from `sessionId`: the part before one of its dashes that
 * gives `name` back through {@link containerName}, else `fallback`.
 */
export function prefixOf(name: string, sessionId: string, fallback: string): string {
  for (let i = name.indexOf('-'); i > 0; i = name.indexOf('-', i + 1)) {
    const candidate = name.slice(0, i);
    if (containerName(sessionId, candidate) === name) return candidate;
  }
  return fallback;
}

/** `E_SESSION_NOT_FOUND` for a session id (or container name) nothing holds. */
export function notFound(sessionId: string, prefix: string | undefined): SessionNotFoundError {
  const name = containerName(sessionId, prefix ?? DEFAULT_PREFIX);
  return new SessionNotFoundError(`no container named ${name} or ${sessionId} (session '${sessionId}')`, {
    details: { sessionId, name },
  });
}
