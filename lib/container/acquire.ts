import { setTimeout as sleep } from 'node:timers/promises';
import { createSession } from '../create-session';
import { AbortedError } from '../errors/aborted-error';
import { SessionBusyError } from '../errors/session-busy-error';
import { SessionExistsError } from '../errors/session-exists-error';
import { SessionNotFoundError } from '../errors/session-not-found-error';
import { resumeWith } from '../resume-session';
import type { Session } from '../session';
import type { EngineOptions } from '../types';
import { adoptUnlabelled } from './adopt-unlabelled';
import { runArgv, startArgv } from './docker-argv';
import { withLegacyFields } from './legacy-error';

/** How many times the name may change hands between a refused create and the adopt before `ready()` gives up. */
export const ACQUIRE_ATTEMPTS = 3;
/** How long `ready()` waits for another process's create of the same sandbox to finish its setup, in milliseconds. */
export const INITIALISING_WAIT_MS = 30_000;
/** Pause between looks at a session another process is still creating, in milliseconds. */
export const INITIALISING_POLL_MS = 100;

/** What {@link acquire} is asked for: the drop-in's create spec and where the engine is. */
export interface AcquireSpec extends EngineOptions {
  sandboxId: string;
  name: string;
  prefix: string;
  image: string;
  workDir?: string | undefined;
  ports?: number[] | undefined;
  env?: Record<string, string> | undefined;
  user?: string | undefined;
  labels?: Record<string, string> | undefined;
}

/**
 * The old module's adopt-or-create, with ownership recorded: a fresh create under the
 * derived name (the engine's name uniqueness is the lock); when the name is taken, the
 * berth session holding it is resumed (`adopted`), or an unlabelled container of the
 * requested image is adopted (see {@link adoptUnlabelled}); anything else is refused.
 * When the holder disappears between the two steps, the create is tried again (up to
 * {@link ACQUIRE_ATTEMPTS} times); a session another process is still setting up is waited
 * for (up to {@link INITIALISING_WAIT_MS}).
 *
 * Every step is bounded by `abortSignal` (`E_ABORTED`; what the create made is removed by id).
 *
 * @returns The session: `created` (this call made it) or `adopted`.
 * @throws The first step's berth error, with `exitCode`, `stderr` and `args` of that step.
 */
export async function acquire(spec: AcquireSpec, abortSignal?: AbortSignal): Promise<Session> {
  const { sandboxId, name, prefix, image, workDir, ports, env, user, labels, engine, socketPath, connectTimeoutMs } = spec;
  const where = { engine, socketPath, connectTimeoutMs, ...(abortSignal ? { abortSignal } : {}) };
  const run = runArgv(name, { image, workDir, ports, env, user });
  const waitUntil = Date.now() + INITIALISING_WAIT_MS;
  for (let attempt = 1; ; attempt++) {
    let exists: SessionExistsError;
    try {
      return await createSession({ sessionId: sandboxId, prefix, image, workDir, ports, env, user, labels, ...where });
    } catch (error) {
      if (!SessionExistsError.isInstance(error)) throw withLegacyFields(error, run);
      exists = error;
    }
    try {
      // The old module's per-handle rule: a handle removes only what it created itself.
      if (exists.details.managed) return await resumeWith({ sessionId: sandboxId, prefix, ...where }, 'per-handle');
      return await adoptUnlabelled({ sessionId: sandboxId, prefix, image, ...where });
    } catch (error) {
      const gone = SessionNotFoundError.isInstance(error) && attempt < ACQUIRE_ATTEMPTS;
      const initialising =
        SessionBusyError.isInstance(error) && error.details.reason === 'initialising' && Date.now() < waitUntil;
      if (!gone && !initialising) throw withLegacyFields(error, startArgv(name));
      if (initialising) {
        attempt -= 1;
        await sleep(INITIALISING_POLL_MS);
        if (abortSignal?.aborted) {
          throw withLegacyFields(
            new AbortedError('ready aborted while another process set the sandbox up', { details: { operation: 'ready' }, cause: abortSignal.reason }),
            startArgv(name),
          );
        }
      }
    }
  }
}
