import { withAbort } from './abort';
import { loadBinding, type NativeBinding } from './binding';
import { toNativeSpec } from './create-spec';
import { engineOptions } from './engine-option';
import { callNative } from './native-call';
import { Session } from './session';
import { RESUME_SESSION_OPTION_KEYS, SPEC_OPTION_KEYS, type ResumeSessionOptions } from './types';
import {
  expectFileAccess,
  compact,
  expectOptionalBoolean,
  expectOptionalOptions,
  expectOptions,
  expectOptionalSignal,
  expectOptionalString,
  expectString,
  invalid,
} from './validate';

/**
 * Resumes an existing session: the only path that adopts a container.
 *
 * A stopped container is started again (its filesystem kept), a paused one unpaused. The
 * handle reports the owner and its liveness. The duty to remove belongs to the process: in
 * the process that created the session (or inherited it) the result shares that duty with
 * the first handle (same `ownership`, no holder record of its own; `remove()`/`stop()` act,
 * and removals through several handles make one engine call, the later ones resolving
 * `already-removed` or `absent`). Otherwise the ownership of the result is `adopted` (it will not
 * remove the container without `force`), or `inherited` with `takeOver` when the owner is
 * dead (then `remove()` removes it; of concurrent take-overs exactly one wins). While the
 * owner lives or is unknown, `takeOver` simply adopts. With `verify`, the container is then
 * checked and repaired in place as {@link verifySession} does (`session.verification`).
 *
 * A recreation of this session that a dead process left half-done is finished or rolled back
 * first (see {@link recreateSession}); one in progress is `E_SESSION_BUSY` (`'recreating'`).
 *
 * Every handle is recorded as a holder (an engine volume other processes see, see
 * {@link listSessions}); an adopted handle's `remove()` makes no engine call, and its
 * `release()` drops that record, leaving the container alone.
 *
 * Engine API: `GET /containers/{name}/json`, `GET /volumes?filters=…` (readiness and holder
 * records), `GET /images/{ref}/json` (drift, when the image reference differs),
 * `POST /volumes/create` (this handle's holder record, or the duty claim
 * `berth-duty-<id>-<n>`), then `POST /containers/{id}/start` or `POST /containers/{id}/unpause`
 * when needed.
 *
 * @param options `sessionId`, `prefix`, `exclusive`, `takeOver`, `spec` + `onDrift`, engine selection, `abortSignal`.
 * @returns The session handle; `drift` lists the `spec` fields that differ from creation.
 * @throws {BerthError} with a code listed in the core's `resume_session` doc
 *   (crates/berth-core/src/lifecycle/resume.rs); each code's class and `details`: docs/errors.md.
 * @example
 * ```ts
 * import { resumeSession } from '@berth/core';
 *
 * const session = await resumeSession({ sessionId: 'agent-42', takeOver: true });
 * if (session.ownership === 'inherited') console.log('previous owner died; we clean up now');
 * ```
 */
export async function resumeSession(options: ResumeSessionOptions): Promise<Session> {
  return resumeWith(options, 'root');
}

/**
 * @internal {@link resumeSession} under one surface's rule (docs/design.md "Parked sessions and
 * handover"): `root` (the package root), `per-handle` (the drop-in `@berth/core/container`: the
 * handle never shares this process's duty, it is `adopted` even in the creating process), or
 * `handover` (the harness provider: the duty moves to this process whether its holder lives or
 * not; of overlapping handovers exactly one wins: one that finds another's claim not yet settled
 * claims nothing, one that loses its claim releases its record; they reject `E_SESSION_BUSY`,
 * `reason: 'taken-over'`).
 */
export async function resumeWith(options: ResumeSessionOptions, rule: 'root' | 'per-handle' | 'handover'): Promise<Session> {
  expectOptions(options, 'options', RESUME_SESSION_OPTION_KEYS);
  const { sessionId, prefix, exclusive, takeOver, spec, onDrift, verify, abortSignal, engine, socketPath, connectTimeoutMs, files } =
    options;
  expectString(sessionId, 'sessionId', { wellFormed: false });
  expectOptionalString(prefix, 'prefix', { wellFormed: false });
  expectOptionalBoolean(exclusive, 'exclusive');
  expectOptionalBoolean(takeOver, 'takeOver');
  expectOptionalBoolean(verify, 'verify');
  expectOptionalOptions(spec, 'spec', SPEC_OPTION_KEYS, 'spec.');
  if (onDrift !== undefined && onDrift !== 'report' && onDrift !== 'error') {
    invalid('onDrift', "expected 'report' or 'error'");
  }
  expectOptionalSignal(abortSignal, 'abortSignal');
  expectFileAccess(files);
  const native = compact({
    sessionId,
    prefix,
    exclusive,
    takeOver,
    spec: spec === undefined ? undefined : toNativeSpec(spec, 'spec.'),
    onDrift,
    verify,
    perHandle: rule === 'per-handle' || undefined,
    handover: rule === 'handover' || undefined,
    ...engineOptions({ engine, socketPath, connectTimeoutMs }),
  }) as Parameters<NativeBinding['resumeSession']>[0];
  const session = await callNative(() =>
    withAbort(abortSignal, 'resumeSession', (token) => loadBinding().resumeSession(native, token)),
  );
  return new Session(session, files);
}
