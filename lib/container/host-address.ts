import { EngineError } from '../errors/engine-error';
import { InvalidArgumentError } from '../errors/invalid-argument-error';
import { SessionNotFoundError } from '../errors/session-not-found-error';
import { peek } from '../peek';
import type { EngineOptions } from '../types';

/**
 * The published host address of container `port`/tcp of whatever container holds the
 * sandbox's name, read by name as the old module's `docker port <name>` did: for a handle
 * that holds no container (it never called `ready()`). A handle that holds one asks its
 * session instead (by id, retried while the engine fills the mapping).
 *
 * Engine API: `GET /containers/{name}/json`.
 *
 * @returns `"127.0.0.1:<host port>"` (a remote engine's host for a remote engine).
 * @throws SessionNotFoundError `E_SESSION_NOT_FOUND` when nothing holds the name.
 * @throws EngineError `E_ENGINE` (status 409) when the container is not running.
 * @throws InvalidArgumentError `E_INVALID_ARGUMENT` when the port is not published.
 */
export async function hostAddressByName(
  sandboxId: string,
  name: string,
  prefix: string,
  port: number,
  where: EngineOptions,
): Promise<string> {
  const seen = await peek(sandboxId, { prefix, ...where });
  if (seen === null) {
    throw new SessionNotFoundError(`session \`${sandboxId}\` not found (no container named \`${name}\`)`, {
      details: { sessionId: sandboxId, name },
    });
  }
  if (seen.state !== 'running') {
    const message = `container \`${name}\` is not running (state ${seen.rawState}): its ports have no host binding`;
    throw new EngineError(message, { details: { operation: 'read published port', status: 409, message } });
  }
  const address = seen.ports[`${port}/tcp`];
  if (address === undefined) {
    throw new InvalidArgumentError(`invalid argument \`port\`: port ${port}/tcp is not published by container \`${name}\``, {
      details: { field: 'port', reason: `port ${port}/tcp is not published by container \`${name}\`` },
    });
  }
  return address;
}
