import type { Holder, Liveness, SessionListing } from '../index';
import type { Colours } from './colour';
import { liveness } from './format';

/** The process that has the duty to remove a session: its creator, or the last inheritor. */
export interface DutyHolder {
  role: 'creator' | 'inheritor';
  pid: number | null;
  liveness: Liveness;
}

/**
 * Who has the duty to remove the session now: the creator (`owner`) at generation 0, else the
 * inheritor record of the current generation (`unknown` when that record is unreadable or
 * missing). Null for a container berth does not manage.
 */
export function dutyHolder(s: SessionListing): DutyHolder | null {
  if (!s.managed || !s.owner) return null;
  if (s.dutyGeneration === 0) return { role: 'creator', pid: s.owner.pid, liveness: s.owner.liveness };
  const h = s.holders.find((x) => x.role === 'inheritor' && x.generation === s.dutyGeneration);
  return { role: 'inheritor', pid: h?.pid ?? null, liveness: h?.liveness ?? 'unknown' };
}

/** What protects a session from removal: its duty holder and every holder, when alive or unknown. */
export function protectors(s: SessionListing): { role: string; pid: number | null; liveness: Liveness }[] {
  const out: { role: string; pid: number | null; liveness: Liveness }[] = [];
  const duty = dutyHolder(s);
  if (duty && duty.liveness !== 'dead') out.push(duty);
  for (const h of s.holders) {
    if (h.liveness === 'dead') continue;
    if (duty && h.role === duty.role && h.pid === duty.pid) continue;
    out.push({ role: h.role, pid: h.pid, liveness: h.liveness });
  }
  return out;
}

/** `pid 123 alive` (`pid ?` when unreadable). */
export function processWord(c: Colours, p: { pid: number | null; liveness: Liveness }): string {
  return `${p.pid ?? '?'} ${liveness(c, p.liveness)}`;
}

/** Holders in a few characters: `"2 (1 alive, 1 dead)"`, `"1 (dead)"`, `"0"`. */
export function holdersSummary(c: Colours, holders: Holder[]): string {
  if (holders.length === 0) return '0';
  if (holders.length === 1) return `1 (${liveness(c, holders[0]!.liveness)})`;
  const counts = { alive: 0, dead: 0, unknown: 0 };
  for (const h of holders) counts[h.liveness] += 1;
  const parts = (['alive', 'dead', 'unknown'] as const).filter((l) => counts[l] > 0);
  if (parts.length === 1) return `${holders.length} (${liveness(c, parts[0]!)})`;
  return `${holders.length} (${parts.map((l) => `${counts[l]} ${liveness(c, l)}`).join(', ')})`;
}

/** A death in a few words: `(oom-killed, exit 137)`, `(exited, exit 3)`, `(removed-outside)`. */
export function deathWord(d: NonNullable<SessionListing['death']>): string {
  return d.exitCode === null ? `(${d.cause})` : `(${d.cause}, exit ${d.exitCode})`;
}

/** `expiresAt` (ms since the epoch) when the API reports one (session lifetimes), else null. */
export function expiresAt(s: object): number | null {
  const v = (s as { expiresAt?: unknown }).expiresAt;
  return typeof v === 'number' && Number.isFinite(v) ? v : null;
}

/** Whether the session is past its `expiresAt` at `now` (the reaper removes it; a listing never does). */
export function isExpired(s: object, now = Date.now()): boolean {
  const at = expiresAt(s);
  return at !== null && at <= now;
}

/** A session listing as the `--json` documents of `ls` and `peek` carry it (stable field names). */
export function sessionJson(s: SessionListing, now = Date.now()): Record<string, unknown> {
  return {
    sessionId: s.sessionId,
    name: s.name,
    id: s.id,
    managed: s.managed,
    state: s.state,
    rawState: s.rawState,
    ready: s.ready,
    image: s.image,
    createdAt: s.createdAt,
    owner: s.owner,
    duty: dutyHolder(s),
    dutyGeneration: s.dutyGeneration,
    holders: s.holders,
    ports: s.ports,
    expiresAt: expiresAt(s),
    lifecycle: s.lifecycle,
    death: s.death ?? null,
    expired: isExpired(s, now),
  };
}
