import { randomUUID } from 'node:crypto';
import type { HarnessV1NetworkSandboxSession, HarnessV1SandboxProvider } from '@ai-sdk/harness';
import { loadBinding } from '../binding';
import { createSession } from '../create-session';
import { callNativeSync } from '../native-call';
import { SessionBusyError } from '../errors/session-busy-error';
import { resumeWith } from '../resume-session';
import type { Session } from '../session';
import { CREATE_SPEC_KEYS, ENGINE_OPTION_KEYS, type CreateSpec, type EngineOptions } from '../types';
import {
  expectOptionalFunction,
  expectOptionalNumber,
  expectOptionalObject,
  expectOptionalSignal,
  expectOptionalString,
  expectOptions,
  expectString,
  optionKeys,
} from '../validate';
import { constants as bufferConstants } from 'node:buffer';
import { BerthSandboxSession, type SandboxCaps } from './sandbox-session';
import { createFromTemplate } from './template-flow';

/**
 * Options of {@link createDockerSandboxProvider}: the create spec of every sandbox it makes
 * (minus the session id, which the harness gives per session) and where the engine is.
 */
export interface DockerSandboxProviderOptions
  extends Omit<CreateSpec, 'sessionId'>,
    EngineOptions {
  /** Reported as the provider's `providerId`. @default 'berth-docker' */
  providerId?: string;
  /**
   * How long a stopped sandbox stays resumable before it is removed, in milliseconds (whole,
   * 0 to 30 days), passed to every session this provider creates (see `createSession`'s
   * `removeAfterStopMs`). `null`: never (a stopped sandbox then stays until someone removes it,
   * including one a failed `HarnessAgent` start left behind).
   * @default 600000 ({@link DEFAULT_REMOVE_AFTER_STOP_MS}, 10 minutes)
   */
  removeAfterStopMs?: number | null;
  /**
   * How long each sandbox lives after it became ready, in milliseconds (whole, 0 to 30 days),
   * passed to every session this provider creates (see `createSession`'s `timeoutMs`): then it
   * is removed, whoever holds it, even if every berth process is gone (the container's
   * keep-alive stops it; the next `reapOrphans` removes it). `null`: no timeout.
   * @default 3600000 ({@link DEFAULT_TIMEOUT_MS}, 1 hour)
   */
  timeoutMs?: number | null;
  /**
   * The cap on what a sandbox's `run` keeps of stdout and stderr together, in bytes (whole, 0
   * to V8's largest string, `buffer.constants.MAX_STRING_LENGTH`, so the text can always be
   * made): the head is kept and the result says `truncated: true`; a command that writes more
   * than 16 MiB past it is killed (see `Session.exec`'s `maxBufferBytes`). The process-wide
   * budget of buffered output (`setBufferBudget`) bounds concurrent runs together. The text
   * takes 1 byte per character when it is all Latin-1, else 2 (up to twice the cap).
   * @default 67108864 ({@link DEFAULT_MAX_OUTPUT_BYTES}, 64 MiB)
   */
  maxOutputBytes?: number;
  /**
   * The largest file a sandbox's `readFile` (the stream), `readBinaryFile` and `readTextFile`
   * take, in bytes (whole, 0 to `buffer.constants.MAX_STRING_LENGTH`): a larger one is
   * `E_FILE_TOO_LARGE` and the read stops at the cap (see `Session.readFile`'s `maxBytes`).
   * @default 67108864 ({@link DEFAULT_MAX_FILE_BYTES}, 64 MiB)
   */
  maxFileBytes?: number;
}

/** @internal Keys of {@link DockerSandboxProviderOptions}. */
export const PROVIDER_OPTION_KEYS = optionKeys<DockerSandboxProviderOptions>()([
  ...CREATE_SPEC_KEYS.filter((key): key is Exclude<(typeof CREATE_SPEC_KEYS)[number], 'sessionId'> => key !== 'sessionId'),
  ...ENGINE_OPTION_KEYS,
  'providerId',
  'removeAfterStopMs',
  'timeoutMs',
  'maxOutputBytes',
  'maxFileBytes',
]);

/** The provider's default `maxOutputBytes`: 64 MiB for both streams together, as `Session.exec`'s default. */
export const DEFAULT_MAX_OUTPUT_BYTES = 64 * 1024 * 1024;

/** The provider's default `maxFileBytes`: 64 MiB, as `Session.readFile`'s default. */
export const DEFAULT_MAX_FILE_BYTES = 64 * 1024 * 1024;

/**
 * The provider's default `timeoutMs`: 1 hour. A harness sandbox is one agent conversation's
 * workspace; when the process that drives it loses its handle (a crash, a failed start, a
 * forgotten `destroy()`), nothing else would ever remove it. An hour outlasts a long agent run
 * on a laptop yet bounds what a lost sandbox costs (hosted sandboxes default shorter: e2b 5
 * minutes). Longer sessions pass a larger value or `null`.
 */
export const DEFAULT_TIMEOUT_MS = 60 * 60_000;

/**
 * The provider's default `removeAfterStopMs`: 10 minutes. `HarnessAgent` stops a sandbox both
 * when the user stops a session (to resume it later with `resumeFrom`, so `stop()` must keep it)
 * and when a start fails (then nothing can ever reach it again). Ten minutes keeps a stopped
 * session resumable across a pause in a conversation, yet bounds what a failed start leaves.
 */
export const DEFAULT_REMOVE_AFTER_STOP_MS = 10 * 60_000;

/** V8's largest string, in UTF-16 code units: the highest text cap (UTF-8 decodes to at most one unit per byte). */
const MAX_STRING_LENGTH = bufferConstants.MAX_STRING_LENGTH;

type CreateOptions = NonNullable<Parameters<HarnessV1SandboxProvider['createSession']>[0]>;
type ResumeOptions = Parameters<NonNullable<HarnessV1SandboxProvider['resumeSession']>>[0];

/**
 * A `HarnessV1SandboxProvider` (AI SDK `@ai-sdk/harness`) backed by berth: each harness
 * session is one container on a local Docker (or Podman) engine, with berth's ownership rules.
 *
 * - `createSession({ sessionId })` is berth's fresh create (a random UUID when no `sessionId`
 *   is given; such a session cannot be resumed, so its `stop()` removes it). A taken id is
 *   `E_SESSION_EXISTS`: nothing is adopted. `onFirstCreate` runs on the `restricted()` view;
 *   if it throws, the container this call created is removed (by id) and the original error
 *   is rethrown (a failed removal is attached as its `cause`... never in its place). Options
 *   of the wrong type (`sessionId`, `identity` not strings, `onFirstCreate` not a function,
 *   `abortSignal` not a signal) are `E_INVALID_ARGUMENT` before any engine call.
 * - `resumeSession({ sessionId })` is a handover: the duty to remove moves to this process
 *   whether the previous holder lives or not (`HarnessAgent` resumes only from a payload that
 *   `detach()` or `stop()` returned), so `destroy()` of the resumed session removes the
 *   container, and the previous process's handles act as adopted from then on. The lifetime
 *   (`timeoutMs`) is renewed from the resume. Of resumes of one payload whose `resumeSession`
 *   calls overlap exactly one gets the session; the others reject `E_SESSION_BUSY`
 *   (`reason: 'taken-over'`). An earlier handle's commands are not fenced (a known limit).
 *   See docs/lifetimes.md "Parked sessions and handover".
 * - `identity` (with `onFirstCreate`): the first create for an identity builds a local template
 *   image `berth-template:<key>` (key: the identity, the image id and the spec fields that
 *   change the filesystem, hashed; never the labels, so runs under other labels share it): one
 *   process, under a cross-process lock (a builder container's name), runs `onFirstCreate`
 *   in a builder container and commits it; every create for that identity (the first one
 *   too) then starts from the template and skips `onFirstCreate` and `setupCommands`. Other
 *   processes wait for a build in progress. See `listTemplates` / `pruneTemplates({ unusedForMs })`.
 *
 * - Every session is created with `removeAfterStopMs` (default 10 minutes): a stopped sandbox
 *   stays resumable that long, then this process (or any `reapOrphans`) removes it. That is
 *   what cleans up after a failed `HarnessAgent` start, which only ever calls `stop()`.
 * - Every session is created with `timeoutMs` (default 1 hour): a running sandbox nobody
 *   removed is removed then, whoever holds it (docs/lifetimes.md "Lifetimes"). A detached conversation
 *   whose process exited is parked until then: reap and `berth reap --watch` keep it.
 * - The container environment has `IS_SANDBOX=1` (an explicit `env.IS_SANDBOX` wins): the
 *   Claude Code CLI refuses its permission-bypass mode as root without it.
 * - A same-process `resumeSession` (the framework's `detach()` then `resumeFrom`) shares this
 *   process's duty to remove: the resumed session's `destroy()` removes the container.
 *
 * Sessions' `id` is the container name; containers use the default prefix `'berth'`.
 *
 * @example
 * ```ts
 * import { HarnessAgent } from '@ai-sdk/harness/agent';
 * import { createDockerSandboxProvider } from '@berth/core/harness';
 *
 * const agent = new HarnessAgent({
 *   harness: myAdapter,
 *   sandbox: createDockerSandboxProvider({ image: 'node:22', workDir: '/workspace' }),
 * });
 * ```
 */
export function createDockerSandboxProvider(options: DockerSandboxProviderOptions): HarnessV1SandboxProvider {
  expectOptions(options, 'options', PROVIDER_OPTION_KEYS);
  expectString(options.image, 'image');
  const {
    providerId = 'berth-docker',
    engine,
    socketPath,
    removeAfterStopMs: retention,
    timeoutMs: timeout,
    maxOutputBytes = DEFAULT_MAX_OUTPUT_BYTES,
    maxFileBytes = DEFAULT_MAX_FILE_BYTES,
    ...given
  } = options;
  // The provider's own caps, never passed to the core: their range is checked here (a string's
  // maximum length is JavaScript's own bound).
  expectOptionalNumber(maxOutputBytes, 'maxOutputBytes', { min: 0, max: MAX_STRING_LENGTH });
  expectOptionalNumber(maxFileBytes, 'maxFileBytes', { min: 0, max: MAX_STRING_LENGTH });
  const caps: SandboxCaps = { maxOutputBytes, maxFileBytes };
  if (retention !== null) expectOptionalNumber(retention, 'removeAfterStopMs');
  if (timeout !== null) expectOptionalNumber(timeout, 'timeoutMs');
  // Their range (0 to 30 days) and message are the core's, checked now, when the provider is made.
  callNativeSync(() => loadBinding().checkLifetimes(retention ?? undefined, timeout ?? undefined));
  const removeAfterStopMs = retention === null ? undefined : (retention ?? DEFAULT_REMOVE_AFTER_STOP_MS);
  const timeoutMs = timeout === null ? undefined : (timeout ?? DEFAULT_TIMEOUT_MS);
  const lifetime = {
    ...(removeAfterStopMs === undefined ? {} : { removeAfterStopMs }),
    ...(timeoutMs === undefined ? {} : { timeoutMs }),
  };
  const spec = { ...given, env: { IS_SANDBOX: '1', ...given.env } };
  const where: EngineOptions = { ...(engine === undefined ? {} : { engine }), ...(socketPath === undefined ? {} : { socketPath }) };
  return {
    specificationVersion: 'harness-sandbox-v1',
    providerId,
    createSession: async (opts: CreateOptions = {}): Promise<HarnessV1NetworkSandboxSession> => {
      // The harness's own options, checked before any engine call (unknown keys pass: a newer
      // harness may add some). The create spec was checked when the provider was made.
      expectOptionalObject(opts, 'options');
      const { sessionId, abortSignal, onFirstCreate, identity } = opts;
      expectOptionalString(sessionId, 'sessionId', { wellFormed: false });
      expectOptionalSignal(abortSignal, 'abortSignal');
      expectOptionalFunction(onFirstCreate, 'onFirstCreate');
      expectOptionalString(identity, 'identity');
      const signal = abortSignal ? { abortSignal } : {};
      const id = sessionId ?? randomUUID();
      const removeOnStop = sessionId === undefined;
      if (identity !== undefined && onFirstCreate) {
        const session = await createFromTemplate({
          identity,
          sessionId: id,
          spec,
          where,
          ...signal,
          ...lifetime,
          firstCreate: async (builder) => onFirstCreate((await wrap(builder, spec.ports ?? [], true, abortSignal, caps)).restricted(), signal),
        });
        return wrap(session, spec.ports ?? [], removeOnStop, abortSignal, caps).catch(async (error: unknown) => {
          await session.remove().catch(() => {});
          throw error;
        });
      }
      const session = await createSession({ ...spec, ...where, ...lifetime, sessionId: id, ...signal });
      try {
        const wrapped = await wrap(session, spec.ports ?? [], removeOnStop, abortSignal, caps);
        if (onFirstCreate) await onFirstCreate(wrapped.restricted(), signal);
        return wrapped;
      } catch (error) {
        // Only what this call created, by id.
        await session.remove().catch((cleanup: unknown) => {
          if (error instanceof Error && error.cause === undefined) (error as { cause?: unknown }).cause = cleanup;
        });
        throw error;
      }
    },
    resumeSession: async ({ sessionId, abortSignal }: ResumeOptions): Promise<HarnessV1NetworkSandboxSession> => {
      const session = await resumeWith(
        {
          sessionId,
          ...(spec.prefix === undefined ? {} : { prefix: spec.prefix }),
          ...where,
          ...(abortSignal ? { abortSignal } : {}),
        },
        'handover',
      );
      try {
        // The lifetime counts again from the resume (as e2b's `connect`).
        if (timeoutMs !== undefined) await session.setTimeout(timeoutMs, abortSignal ? { abortSignal } : {});
        return await wrap(session, spec.ports ?? [], false, abortSignal, caps);
      } catch (error) {
        // The duty came with the handover: a failed resume leaves the session parked (its
        // lifetime governs it), it removes nothing. A renewal refused `not-owner` means an
        // overlapping handover took the duty after this one's claim: this one lost, drops its
        // own record (the handle acts as adopted) and says `taken-over`.
        const lost = SessionBusyError.isInstance(error) && error.details.reason === 'not-owner';
        if (session.ownership === 'adopted' || lost) await session.release().catch(() => {});
        if (lost) {
          throw new SessionBusyError(`session ${sessionId} was taken over by another resume`, {
            details: { ...error.details, reason: 'taken-over' },
            cause: error,
          });
        }
        throw error;
      }
    },
  };
}

/**
 * The harness session over `session`, its default working directory read from the container
 * (inspect's `Config.WorkingDir`, where its execs start; one request, no exec), bounded by the
 * harness call's `abortSignal`.
 */
async function wrap(
  session: Session,
  ports: number[],
  removeOnStop: boolean,
  abortSignal: AbortSignal | undefined,
  caps: SandboxCaps,
): Promise<BerthSandboxSession> {
  const defaultWorkingDirectory = await session.workingDirectory(abortSignal ? { abortSignal } : {});
  return new BerthSandboxSession(session, { defaultWorkingDirectory, ports, removeOnStop, ...caps });
}
