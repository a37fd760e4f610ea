import type { PullProgress } from './types';
import { invalid } from './validate';

/** A progress event as the binding delivers it (absent fields left out). */
export interface NativePullProgress {
  layer?: string | null;
  current?: number | null;
  total?: number | null;
  status: string;
}

/**
 * Checks `onPullProgress` and wraps it for the native side: events get their public shape
 * (absent fields `null`), and an exception the callback throws becomes a process warning
 * instead of an uncaught exception on the main thread.
 *
 * @throws InvalidArgumentError `E_INVALID_ARGUMENT` when `onPullProgress` is not a function.
 */
export function progressCallback(
  onPullProgress: unknown,
): ((progress: NativePullProgress) => void) | undefined {
  if (onPullProgress === undefined) return undefined;
  if (typeof onPullProgress !== 'function') invalid('onPullProgress', `expected a function, got ${typeof onPullProgress}`);
  const callback = onPullProgress as (progress: PullProgress) => void;
  return (progress) => {
    try {
      callback({
        layer: progress.layer ?? null,
        current: progress.current ?? null,
        total: progress.total ?? null,
        status: progress.status,
      });
    } catch (error) {
      process.emitWarning(`berth: onPullProgress threw: ${error instanceof Error ? error.message : String(error)}`);
    }
  };
}
