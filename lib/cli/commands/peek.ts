import type { Command } from 'commander';
import { DEFAULT_PREFIX, type Holder, type SessionListing } from '../../index';
import type { Colours } from '../colour';
import { contextOf } from '../context';
import { lookUp, notFound } from '../look-up';
import { age, expiry, liveness, ports, state, yesNo } from '../format';
import { withProgress } from '../progress';
import { dutyHolder, expiresAt, processWord, sessionJson } from '../session-view';
import { renderPairs } from '../table';

/** `berth peek <sessionId>`: everything peek knows, readable. */
export function registerPeek(program: Command): void {
  program
    .command('peek')
    .description('show one session: container, state, readiness, owner, holders, ports, expiry (changes nothing)')
    .argument('<session>', 'the session id, or its container name (the NAME column of ls)')
    .option('--prefix <prefix>', 'the name prefix the session was created with', DEFAULT_PREFIX)
    .action(async (sessionId: string, options: { prefix: string }, command: Command) => {
      const ctx = contextOf(command);
      const found = await withProgress(ctx, `looking at ${sessionId}`, () => lookUp(sessionId, options.prefix, ctx.engine));
      if (!found) throw notFound(sessionId, options.prefix);
      const now = Date.now();
      if (ctx.json) return ctx.out.json({ session: sessionJson(found.session, now) });
      ctx.out.line(renderPairs(pairsOf(ctx.out.c, found.session, now), { bold: ctx.out.c.bold }));
    });
}

function pairsOf(c: Colours, s: SessionListing, now: number): [string, string][] {
  const duty = dutyHolder(s);
  const at = expiresAt(s);
  const pairs: [string, string][] = [
    ['session', s.sessionId ?? c.magenta('(not managed by berth)')],
    ['name', s.name],
    ['id', s.id],
    ['managed', yesNo(s.managed)],
    ['state', s.rawState === s.state ? state(c, s.state) : `${state(c, s.state)} (engine: ${s.rawState})`],
    ...(s.death
      ? [['died', `${c.red(s.death.cause)}${s.death.exitCode === null ? '' : `, exit code ${s.death.exitCode}`}${s.death.finishedAt ? ` at ${s.death.finishedAt}` : ''}`] as [string, string]]
      : []),
    ['ready', s.managed ? yesNo(s.ready) : '-'],
    ['lifecycle', s.lifecycle ?? '-'],
    ['image', s.image],
    ['created', `${s.createdAt} (${age(s.createdAt, now)})`],
  ];
  if (s.owner) {
    pairs.push(['creator', `pid ${processWord(c, s.owner)}, host ${s.owner.hostId.slice(0, 12)}, started at tick ${s.owner.startTime}`]);
  }
  if (duty) pairs.push(['duty', `${duty.role} pid ${processWord(c, duty)} (generation ${s.dutyGeneration})`]);
  pairs.push(['ports', ports(s.ports)]);
  // `expires  in 42m (2026-…Z)`, `expires  expired (2026-…Z)`, `expires  -` (never).
  pairs.push(['expires', at === null ? '-' : `${expiry(c, at, now)} (${new Date(at).toISOString()})`]);
  if (s.managed) {
    pairs.push(['holders', s.holders.length ? holderLine(c, s.holders[0]!) : '-']);
    for (const h of s.holders.slice(1)) pairs.push(['', holderLine(c, h)]);
  }
  return pairs;
}

/** One holder in words (its record volume's name is in `--json`). */
function holderLine(c: Colours, h: Holder): string {
  if (h.invalid) return `unreadable record ${h.record} (${h.invalid}): counts as ${liveness(c, h.liveness)}`;
  return `${h.role}${h.generation ? ` (generation ${h.generation})` : ''} pid ${h.pid ?? '?'} ${liveness(c, h.liveness)}`;
}
