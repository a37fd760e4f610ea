import type { Colours } from './colour';
import type { Liveness, SessionState } from '../index';

/**
 * A past time relative to `now`: `"12s ago"`, `"3m ago"`, `"5h ago"`, `"2d ago"`
 * (a time in the future, from clock skew, reads `"just now"`).
 * @param at RFC 3339 time or milliseconds since the epoch.
 */
export function age(at: string | number, now = Date.now()): string {
  const t = typeof at === 'number' ? at : Date.parse(at);
  if (Number.isNaN(t)) return '-';
  const s = Math.floor((now - t) / 1000);
  if (s < 1) return 'just now';
  if (s < 60) return `${s}s ago`;
  if (s < 3600) return `${Math.floor(s / 60)}m ago`;
  if (s < 48 * 3600) return `${Math.floor(s / 3600)}h ago`;
  return `${Math.floor(s / 86400)}d ago`;
}

/**
 * A future time relative to `now`: `"in 3m"`, or `"expired"` once past.
 * @param at Milliseconds since the epoch (as the API's `expiresAt`) or an RFC 3339 time.
 */
export function until(at: string | number, now = Date.now()): string {
  const t = typeof at === 'number' ? at : Date.parse(at);
  if (Number.isNaN(t)) return String(at);
  const s = Math.floor((t - now) / 1000);
  if (t <= now) return 'expired';
  if (s < 60) return `in ${s}s`;
  if (s < 3600) return `in ${Math.floor(s / 60)}m`;
  if (s < 48 * 3600) return `in ${Math.floor(s / 3600)}h`;
  return `in ${Math.floor(s / 86400)}d`;
}

/** `in 42m`, `expired` (red) or `-` (never expires): the EXPIRES column, and `peek`'s `expires` line. */
export function expiry(c: Colours, at: number | null, now = Date.now()): string {
  if (at === null) return '-';
  const words = until(at, now);
  return words === 'expired' ? c.red(words) : words;
}

/** Bytes as `"512 B"`, `"1.4 MB"` (decimal units, as `docker images`). */
export function bytes(n: number): string {
  const units = ['B', 'kB', 'MB', 'GB', 'TB'];
  let v = n;
  let i = 0;
  while (v >= 1000 && i < units.length - 1) {
    v /= 1000;
    i += 1;
  }
  return i === 0 ? `${v} B` : `${v.toFixed(v < 10 ? 1 : 0)} ${units[i]}`;
}

/** Published ports as `docker ps` writes them: `"127.0.0.1:49153->8080/tcp"`, comma-separated; `"-"` for none. */
export function ports(map: Record<string, string>): string {
  let out = '';
  for (const container in map) out += `${out ? ', ' : ''}${map[container]}->${container}`;
  return out || '-';
}

/** `alive` green, `dead` red, `unknown` yellow. */
export function liveness(c: Colours, l: Liveness): string {
  return l === 'alive' ? c.green(l) : l === 'dead' ? c.red(l) : c.yellow(l);
}

/**
 * A state word, coloured by what it means for the session: the listing's word whatever it is
 * (a state added later, such as `parked`, is shown as given, in yellow).
 */
export function state(c: Colours, s: SessionState | string): string {
  if (s === 'running') return c.green(s);
  if (s === 'exited' || s === 'dead' || s === 'removing') return c.red(s);
  return c.yellow(s);
}

/** `yes` / `no`. */
export function yesNo(value: boolean): string {
  return value ? 'yes' : 'no';
}

/** The first 12 hex digits of a container or image id (`sha256:` dropped). */
export function shortId(id: string): string {
  return id.replace(/^sha256:/, '').slice(0, 12);
}

/** `k=v,k2=v2`, or `"-"` for none. */
export function labelList(labels: Record<string, string>): string {
  const list = Object.entries(labels).map(([k, v]) => `${k}=${v}`);
  return list.length ? list.join(',') : '-';
}
