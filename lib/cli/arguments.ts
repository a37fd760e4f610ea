import { InvalidArgumentError } from 'commander';

/**
 * commander's collector for a repeatable `--label k=v`: adds one pair to the record.
 * A value without `=`, or with an empty key, is a usage error.
 */
export function collectLabel(value: string, previous: Record<string, string> = {}): Record<string, string> {
  const at = value.indexOf('=');
  if (at <= 0) throw new InvalidArgumentError(`expected key=value, got '${value}'`);
  return { ...previous, [value.slice(0, at)]: value.slice(at + 1) };
}

const UNITS_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** The shortest `--watch` interval, in milliseconds. */
export const MIN_INTERVAL_MS = 100;

/**
 * A duration: `500ms`, `30s`, `5m`, `1h`, or a bare number of seconds. Returns milliseconds.
 * Anything else, or less than {@link MIN_INTERVAL_MS}, is a usage error.
 */
export function parseInterval(value: string): number {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/.exec(value.trim());
  if (!m) throw new InvalidArgumentError(`expected a duration such as 30s, 5m, 1h or 500ms, got '${value}'`);
  const ms = Number(m[1]) * UNITS_MS[m[2] ?? 's']!;
  if (ms < MIN_INTERVAL_MS) throw new InvalidArgumentError(`the interval must be at least ${MIN_INTERVAL_MS}ms`);
  return ms;
}

/** A duration in milliseconds as `--watch` would take it back (`30s`, `1.5s`, `500ms`). */
export function formatInterval(ms: number): string {
  if (ms % 3_600_000 === 0) return `${ms / 3_600_000}h`;
  if (ms % 60_000 === 0) return `${ms / 60_000}m`;
  if (ms >= 1000) return `${ms / 1000}s`;
  return `${ms}ms`;
}

/**
 * An age such as `--unused-for` takes: `7d`, `12h`, `30m`, `45s`, `500ms`, or `0`. Returns
 * milliseconds (a whole number). A bare number other than 0, a negative or fractional count of
 * milliseconds, or more than 100 years is a usage error.
 */
export function parseAge(value: string): number {
  const text = value.trim();
  if (text === '0') return 0;
  const m = /^(\d+(?:\.\d+)?)(ms|s|m|h|d)$/.exec(text);
  if (!m) throw new InvalidArgumentError(`expected a duration such as 7d, 12h, 30m, 45s or 500ms, got '${value}'`);
  const ms = Number(m[1]) * UNITS_MS[m[2]!]!;
  if (!Number.isSafeInteger(ms) || ms > 100 * 365 * UNITS_MS.d!) {
    throw new InvalidArgumentError(`expected a whole number of milliseconds up to 100 years, got '${value}'`);
  }
  return ms;
}
