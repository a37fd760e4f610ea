import { withAbort } from './abort';
import type { NativeBinding, NativeCancelToken, NativeSession } from './binding';
import { toNativeSpec } from './create-spec';
import { engineOptions } from './engine-option';
import { callNative } from './native-call';
import { progressCallback, type NativePullProgress } from './pull-progress';
import { Session } from './session';
import { CREATE_SESSION_OPTION_KEYS, type CreateSessionOptions, type FileAccess } from './types';
import {
  compact,
  expectFileAccess,
  expectOptions,
  expectOptionalNumber,
  expectOptionalSignal,
  expectOptionalString,
  expectString,
} from './validate';

/** The create options as the binding takes them (createSession and recreateSession alike). */
export type NativeCreateOptions = Parameters<NativeBinding['createSession']>[0];

/** A checked create: what the binding gets, and the two arguments beside it. */
export interface PreparedCreate {
  /** Spec, platform and engine selection in the binding's form. */
  native: NativeCreateOptions;
  /** The caller's signal, if any. */
  abortSignal: AbortSignal | undefined;
  /** The wrapped `onPullProgress`, if any (see {@link progressCallback}). */
  onProgress: ((progress: NativePullProgress) => void) | undefined;
  /** Who file calls act as. */
  files: FileAccess | undefined;
}

/**
 * The shared opening of {@link createSession} and {@link recreateSession}: type-checks the
 * options (the value rules are the native core's), splits off the signal, the engine selection
 * and the pull options, and converts the create spec into the binding's form. An unknown option
 * is rejected.
 *
 * @param options A create spec with engine selection, pull options and `abortSignal`.
 * @throws InvalidArgumentError `E_INVALID_ARGUMENT` naming the first bad option, before any engine call.
 */
export function prepare(options: CreateSessionOptions): PreparedCreate {
  expectOptions(options, 'options', CREATE_SESSION_OPTION_KEYS);
  const { abortSignal, engine, socketPath, connectTimeoutMs, platform, onPullProgress, removeAfterStopMs, timeoutMs, files, ...spec } =
    options;
  expectString(spec.sessionId, 'sessionId', { wellFormed: false });
  // Numbers here; their range (0 to 30 days) and message are the core's (`validate_lifetime_ms`).
  expectOptionalNumber(removeAfterStopMs, 'removeAfterStopMs');
  expectOptionalNumber(timeoutMs, 'timeoutMs');
  expectString(spec.image, 'image');
  expectOptionalString(platform, 'platform');
  expectOptionalSignal(abortSignal, 'abortSignal');
  expectFileAccess(files);
  const onProgress = progressCallback(onPullProgress);
  const native = compact({
    ...toNativeSpec(spec),
    platform,
    removeAfterStopMs,
    timeoutMs,
    ...engineOptions({ engine, socketPath, connectTimeoutMs }),
  }) as NativeCreateOptions;
  return { native, abortSignal, onProgress, files };
}

/**
 * Runs one native create-like call with prepared options: the abort signal wired to a native
 * cancel token (see {@link withAbort}), native failures turned into berth errors, the native
 * session wrapped in a {@link Session}.
 *
 * @param operation Named in `E_ABORTED` (`'createSession'`, `'recreateSession'`).
 * @param prepared What {@link prepare} returned.
 * @param call Starts the native call.
 */
export async function runCreate(
  operation: string,
  prepared: PreparedCreate,
  call: (
    native: NativeCreateOptions,
    token: NativeCancelToken | undefined,
    onProgress: PreparedCreate['onProgress'],
  ) => Promise<NativeSession>,
): Promise<Session> {
  const session = await callNative(() =>
    withAbort(prepared.abortSignal, operation, (token) => call(prepared.native, token, prepared.onProgress)),
  );
  return new Session(session, prepared.files);
}
