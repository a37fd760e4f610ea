import { constants as bufferConstants } from 'node:buffer';

import { loadBinding } from './binding';
import { callNativeSync } from './native-call';
import { expectOptionalNumber, invalid } from './validate';

/**
 * The default process-wide budget of buffered exec output, in bytes (256 MiB): four calls at
 * the default `maxBufferBytes` at once.
 */
export const DEFAULT_BUFFER_BUDGET_BYTES = 256 * 1024 * 1024;

/** The process-wide budget of buffered exec output (see {@link setBufferBudget}). */
export interface BufferBudget {
  /** The budget, in bytes. */
  budgetBytes: number;
  /** What buffered calls in flight hold of it now, in bytes. */
  heldBytes: number;
}

/**
 * Sets the process-wide budget of buffered exec output: how many bytes every buffered call in
 * flight (`Session.exec`, `Session.execText`, setup commands, the harness's `run`) may hold
 * together, whatever each call's own `maxBufferBytes`. A call that finds the budget spent keeps
 * what it already holds, drops further output and answers `truncated: true`, exactly as at its
 * own cap (a writer that goes on 16 MiB past that point is killed); it never waits for room and
 * never fails for it. A call gives its bytes back when it settles (its result is then the
 * caller's). No engine call. Default {@link DEFAULT_BUFFER_BUDGET_BYTES}; the
 * `BERTH_BUFFER_BUDGET_BYTES` environment variable sets it when the module loads.
 *
 * @param bytes Whole bytes, from 0 (every buffered call is then truncated at its first byte).
 * @returns The budget before the call, in bytes.
 * @throws {InvalidArgumentError} `E_INVALID_ARGUMENT` when `bytes` is not a whole number from 0
 *   to a Buffer's maximum length (`buffer.constants.MAX_LENGTH`).
 */
export function setBufferBudget(bytes: number): number {
  if (typeof bytes !== 'number') invalid('bytes', `expected a number, got ${typeof bytes}`);
  // At most a Buffer's maximum length (JavaScript's own bound, as `maxBufferBytes`); a negative
  // one is refused by the binding's conversion.
  expectOptionalNumber(bytes, 'bytes', { max: bufferConstants.MAX_LENGTH });
  return callNativeSync(() => loadBinding().setBufferBudget(bytes));
}

/** The process-wide budget of buffered exec output and what calls hold of it now (no engine call). */
export function bufferBudget(): BufferBudget {
  return callNativeSync(() => loadBinding().bufferBudget());
}
