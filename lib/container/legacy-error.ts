import type { BerthError } from '../errors/berth-error';

/**
 * The fields callers of the old `container.ts` read on its errors, kept on every error
 * `@berth/core/container` rejects with, beside berth's own `code` and `details`.
 */
export interface LegacyErrorFields {
  /**
   * The exit code of a process that really exited (a command in the container); `null` for
   * everything else (an engine refusal, an unreachable engine, bad input): no process ran,
   * so no exit code is made up.
   */
  exitCode: number | null;
  /** What the failing process wrote to stderr; without a process, the error's message. */
  stderr: string;
  /** The docker CLI argv the old module would have run for the failing step (`['rm', '-f', id]`), env values redacted. */
  args: string[];
}

/** An error of `@berth/core/container`: a berth error (stable `code`, `details`) with the old module's fields. */
export type ContainerError = BerthError & LegacyErrorFields;

/**
 * Adds {@link LegacyErrorFields} to `error` (an `Error`; anything else is returned as is)
 * and returns it. Existing fields of the same names are replaced.
 */
export function withLegacyFields(error: unknown, args: readonly string[]): unknown {
  if (!(error instanceof Error)) return error;
  const details = (error as { details?: unknown }).details;
  const facts = details !== null && typeof details === 'object' ? (details as Record<string, unknown>) : {};
  const fields: LegacyErrorFields = {
    exitCode: typeof facts.exitCode === 'number' ? facts.exitCode : null,
    stderr: facts.stderr === undefined || facts.stderr === null ? error.message : text(facts.stderr),
    args: [...args],
  };
  for (const [key, value] of Object.entries(fields)) {
    Object.defineProperty(error, key, { value, enumerable: true, writable: true, configurable: true });
  }
  return error;
}

function text(value: unknown): string {
  if (value instanceof Uint8Array) return Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('utf8');
  return String(value);
}
