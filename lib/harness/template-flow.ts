import { createHash } from 'node:crypto';
import { createSession } from '../create-session';
import { AbortedError } from '../errors/aborted-error';
import { ImageNotFoundError } from '../errors/image-not-found-error';
import { SessionBusyError } from '../errors/session-busy-error';
import { SessionExistsError } from '../errors/session-exists-error';
import { peek } from '../peek';
import { resumeSession } from '../resume-session';
import type { Session } from '../session';
import { TEMPLATE_REPO, templateExists } from '../templates';
import type { CreateSpec, EngineOptions } from '../types';

/** Bump when the key's inputs change: old templates are then simply not found. */
const TEMPLATE_KEY_VERSION = 1;
/** How long a create waits for another process building the same template, in milliseconds. */
export const TEMPLATE_WAIT_TIMEOUT_MS = 10 * 60_000;
const TEMPLATE_POLL_MS = 250;

/** The create spec of a provider, minus the per-session id. */
export type ProviderSpec = Omit<CreateSpec, 'sessionId'>;

/**
 * The template key of `identity` for sessions made from `spec`: SHA-256 over the identity and
 * the whole spec (env values hashed, never stored), 40 hex characters. Two providers with
 * different images, env, mounts or labels never share a template.
 */
export function templateKey(identity: string, spec: ProviderSpec): string {
  return createHash('sha256').update(canonical([TEMPLATE_KEY_VERSION, identity, spec])).digest('hex').slice(0, 40);
}

function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/** The session id of the container a template is built in (its name is the cross-process lock). */
export function builderSessionId(key: string): string {
  return `template-${key}`;
}

/**
 * Creates session `sessionId` from the template of `identity`, building the template first
 * when it does not exist: exactly one process builds it (the engine's name uniqueness on the
 * builder container is the lock, across processes), runs `firstCreate` there, commits it and
 * removes the builder; the others wait for the template, then start from it. A builder whose
 * process died is taken over and removed, and the build starts again. Sessions made from a
 * template skip `setupCommands` (their effects are in the template) and never run `firstCreate`.
 *
 * The builder runs without the spec's `env`: a commit stores the container's configuration,
 * env values included, in the image's metadata (`ContainerConfig`), which no option drops.
 *
 * @throws SessionBusyError `E_SESSION_BUSY` (`reason: 'template-building'`) after
 * {@link TEMPLATE_WAIT_TIMEOUT_MS} of waiting for another process's build.
 */
export async function createFromTemplate(input: {
  identity: string;
  sessionId: string;
  spec: ProviderSpec;
  where: EngineOptions;
  abortSignal?: AbortSignal;
  /** The sessions' (and the builder's) `removeAfterStopMs`; not part of the template key. */
  removeAfterStopMs?: number | undefined;
  /**
   * The sessions' `timeoutMs` (never the builder's: its filesystem, deadline file included,
   * becomes the template); not part of the template key.
   */
  timeoutMs?: number | undefined;
  firstCreate: (builder: Session) => Promise<void>;
}): Promise<Session> {
  const { identity, sessionId, spec, where, abortSignal, firstCreate, removeAfterStopMs, timeoutMs } = input;
  const timeout = timeoutMs === undefined ? {} : { timeoutMs };
  const key = templateKey(identity, spec);
  const signal = { ...(abortSignal ? { abortSignal } : {}), ...(removeAfterStopMs === undefined ? {} : { removeAfterStopMs }) };
  for (;;) {
    if (await templateExists(key, where)) {
      try {
        const { setupCommands: _skipped, ...rest } = spec;
        return await createSession({ ...rest, ...where, ...signal, ...timeout, image: `${TEMPLATE_REPO}:${key}`, sessionId });
      } catch (error) {
        // Pruned between the check and the create: build it again.
        if (!ImageNotFoundError.isInstance(error)) throw error;
      }
    }
    let builder: Session;
    try {
      // Without env: the engine's commit stores the container's config (env values included)
      // in the image's metadata, so a build never sees the provider's env values.
      const { env: _withheld, ...buildSpec } = spec;
      builder = await createSession({ ...buildSpec, ...where, ...signal, sessionId: builderSessionId(key) });
    } catch (error) {
      if (!SessionExistsError.isInstance(error)) throw error;
      await waitForBuild(key, spec, where, abortSignal);
      continue;
    }
    try {
      await firstCreate(builder);
      await builder.commitTemplate(key);
    } finally {
      await builder.remove();
    }
  }
}

/** Waits until the template exists or its builder is gone (taking over a dead builder's). */
async function waitForBuild(key: string, spec: ProviderSpec, where: EngineOptions, abortSignal?: AbortSignal): Promise<void> {
  const deadline = Date.now() + TEMPLATE_WAIT_TIMEOUT_MS;
  const prefix = spec.prefix === undefined ? {} : { prefix: spec.prefix };
  for (;;) {
    if (abortSignal?.aborted) {
      throw new AbortedError('createSession aborted while waiting for a template', { details: { operation: 'createSession' } });
    }
    if (await templateExists(key, where)) return;
    const builder = await peek(builderSessionId(key), { ...prefix, ...where });
    if (builder === null) return;
    if (builder.owner?.liveness === 'dead') {
      // Its builder died mid-build: take the duty over and remove it, then build again.
      const orphan = await resumeSession({ sessionId: builderSessionId(key), takeOver: true, ...prefix, ...where }).catch(() => null);
      if (orphan?.ownership === 'inherited') await orphan.remove();
      else await orphan?.release();
      return;
    }
    if (Date.now() > deadline) {
      throw new SessionBusyError(`template ${key} is still being built by another process`, {
        details: { sessionId: builderSessionId(key), name: builder.name, id: builder.id, reason: 'template-building', owner: builder.owner },
      });
    }
    await new Promise((resolve) => setTimeout(resolve, TEMPLATE_POLL_MS));
  }
}
