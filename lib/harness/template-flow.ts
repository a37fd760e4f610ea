import { createHash } from 'node:crypto';
import { createSession } from '../create-session';
import { AbortedError } from '../errors/aborted-error';
import { ImageNotFoundError } from '../errors/image-not-found-error';
import { SessionBusyError } from '../errors/session-busy-error';
import { SessionExistsError } from '../errors/session-exists-error';
import { SessionIncompleteError } from '../errors/session-incomplete-error';
import { reapOrphans } from '../reap-orphans';
import { peek } from '../peek';
import { resumeSession } from '../resume-session';
import type { Session } from '../session';
import { ensureImage } from '../ensure-image';
import { imageId, TEMPLATE_REPO, templateExists, touchTemplate } from '../templates';
import type { CreateSpec, EngineOptions } from '../types';

/** Bump when the key's inputs change: old templates are then simply not found (and pruned by age). */
const TEMPLATE_KEY_VERSION = 2;
/** How long a create waits for another process building the same template, in milliseconds. */
export const TEMPLATE_WAIT_TIMEOUT_MS = 10 * 60_000;
const TEMPLATE_POLL_MS = 250;

/** The create spec of a provider, minus the per-session id. */
export type ProviderSpec = Omit<CreateSpec, 'sessionId'>;

/**
 * The spec fields that change what a build leaves in the image's filesystem, and so the only
 * ones in the key (besides the identity and the image id). Not in it: `labels`, `prefix`, `env`
 * (the builder runs without it), ports, network, limits, security options and mount sources
 * (a mount's content is never committed; its mount point is).
 */
const FILESYSTEM_FIELDS = ['user', 'workDir', 'setupCommands', 'readOnlyRootFilesystem', 'writablePaths'] as const;

/**
 * The template key of `identity` for sessions made from `spec`: SHA-256 (40 hex characters) over
 * what makes two templates differ: the identity (the harness's bootstrap hash), the image id the
 * spec's image resolves to now (`imageId`; a retagged image builds a new template), the spec's
 * filesystem fields (`user`, `workDir`, `setupCommands`, `readOnlyRootFilesystem` and
 * `writablePaths`) and the mount points. Never the caller's labels, env,
 * prefix or limits: two runs under different labels share one template.
 */
export function templateKey(identity: string, spec: ProviderSpec, imageId: string): string {
  const fields: Record<string, unknown> = {};
  for (const f of FILESYSTEM_FIELDS) fields[f] = spec[f];
  fields.mountPoints = (spec.mounts ?? []).map((m) => m.target).sort();
  return createHash('sha256').update(canonical([TEMPLATE_KEY_VERSION, identity, imageId, fields])).digest('hex').slice(0, 40);
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
  const bound0 = abortSignal ? { abortSignal } : {};
  // The image first (a pull when missing, as a create does), so that its id keys the template.
  await ensureImage(spec.image, { ...where, ...bound0 });
  const id = await imageId(spec.image, { ...where, ...bound0 });
  const key = templateKey(identity, spec, id ?? spec.image);
  const signal = { ...(abortSignal ? { abortSignal } : {}), ...(removeAfterStopMs === undefined ? {} : { removeAfterStopMs }) };
  const bound = abortSignal ? { abortSignal } : {};
  // One bound for every round of waiting on another process's build.
  const deadline = Date.now() + TEMPLATE_WAIT_TIMEOUT_MS;
  for (;;) {
    if (await templateExists(key, { ...where, ...bound })) {
      // Its last use, which pruneTemplates({ unusedForMs }) reads.
      await touchTemplate(key, { ...where, ...bound });
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
      await waitForBuild(key, spec, where, deadline, abortSignal);
      continue;
    }
    try {
      await firstCreate(builder);
      await builder.commitTemplate(key, bound);
    } finally {
      await builder.remove();
    }
  }
}

/**
 * Waits until the template exists or its builder is gone, up to `deadline` (ms since the epoch;
 * then `E_SESSION_BUSY` `template-building`) or the caller's signal (`E_ABORTED`). A builder whose
 * process died is taken over and removed by id; one it left incomplete (its setup never
 * finished: `E_SESSION_INCOMPLETE`) is removed by a reap narrowed to the builder's own labels and
 * prefix (the reaper removes only what a dead process left). Each round pauses
 * {@link TEMPLATE_POLL_MS} first, so a builder that cannot be removed never spins the loop.
 */
async function waitForBuild(key: string, spec: ProviderSpec, where: EngineOptions, deadline: number, abortSignal?: AbortSignal): Promise<void> {
  const prefix = spec.prefix === undefined ? {} : { prefix: spec.prefix };
  for (let round = 0; ; round += 1) {
    if (round > 0) await pause(TEMPLATE_POLL_MS, abortSignal);
    if (abortSignal?.aborted) {
      throw new AbortedError('createSession aborted while waiting for a template', { details: { operation: 'createSession' } });
    }
    const bound = abortSignal ? { abortSignal } : {};
    if (await templateExists(key, { ...where, ...bound })) return;
    const builder = await peek(builderSessionId(key), { ...prefix, ...where, ...bound });
    if (builder === null) return;
    if (Date.now() > deadline) {
      throw new SessionBusyError(`template ${key} is still being built by another process`, {
        details: { sessionId: builderSessionId(key), name: builder.name, id: builder.id, reason: 'template-building', owner: builder.owner },
      });
    }
    if (builder.owner?.liveness === 'dead') {
      // Its builder died mid-build: take the duty over and remove it, then build again.
      const orphan = await resumeSession({ sessionId: builderSessionId(key), takeOver: true, ...prefix, ...where, ...bound }).catch(
        (error: unknown) => {
          if (AbortedError.isInstance(error)) throw error;
          if (SessionIncompleteError.isInstance(error)) return 'incomplete' as const;
          return null;
        },
      );
      if (orphan === 'incomplete') {
        // Setup never finished under a dead creator: the reaper removes it (by id).
        const labels = spec.labels === undefined ? {} : { labels: spec.labels };
        await reapOrphans({ ...prefix, ...labels, ...where, ...bound });
      } else if (orphan?.ownership === 'inherited') await orphan.remove();
      else await orphan?.release();
      await pause(TEMPLATE_POLL_MS, abortSignal);
      return;
    }
  }
}

/** Resolves after `ms`, or at once when `signal` fires (the loop then rejects `E_ABORTED`). */
function pause(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });
}
