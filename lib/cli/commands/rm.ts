import type { Command } from 'commander';
import { BerthError, DEFAULT_PREFIX, resumeSession, type EngineOptions } from '../../index';
import { contextOf } from '../context';
import { ReportedFailure } from '../exit-codes';
import { shortId } from '../format';
import { withProgress } from '../progress';
import { dutyHolder, protectors } from '../session-view';
import { lookUp, type Found } from '../look-up';

/** What `rm` did with one session (`--json`: `{ "results": [RmResult, ...] }`). */
export interface RmResult {
  sessionId: string;
  name: string | null;
  id: string | null;
  /** `removed`; `refused` (alive or unknown owner or holder, or not berth's); `absent`; `failed`. */
  outcome: 'removed' | 'refused' | 'absent' | 'failed';
  /** Why, in words. */
  reason: string;
  /** The berth error code when not removed. */
  code: string | null;
}

interface RmOptions {
  prefix: string;
  force?: boolean;
}

/** `berth rm <session>...`: removes sessions (by session id or container name) by container id through the public API. */
export function registerRm(program: Command): void {
  program
    .command('rm')
    .description(
      'remove sessions by container id; refuses one whose owner or a holder is alive or unknown unless --force, and never removes a container berth does not manage',
    )
    .argument('<session...>', 'session ids, or container names (the NAME column of ls)')
    .option('--prefix <prefix>', 'the name prefix the sessions were created with', DEFAULT_PREFIX)
    .option('-f, --force', 'remove even when the owner or a holder is alive or unknown')
    .action(async (ids: string[], options: RmOptions, command: Command) => {
      const ctx = contextOf(command);
      const { c, ce } = ctx.out;
      const results: RmResult[] = [];
      for (const sessionId of ids) {
        const r = await withProgress(ctx, `removing ${sessionId}`, () => removeOne(sessionId, options, ctx.engine));
        results.push(r);
        if (ctx.json) continue;
        const where = r.name ? ` ${c.dim(`(${r.name}${r.id ? ` ${shortId(r.id)}` : ''})`)}` : '';
        if (r.outcome === 'removed') ctx.out.line(`${sessionId}: ${c.green('removed')}${where}: ${r.reason}`);
        else ctx.out.note(`${ce.red(r.code ?? 'E_ENGINE')}: ${sessionId}: ${r.outcome}: ${r.reason}`);
      }
      if (ctx.json) ctx.out.json({ results });
      if (results.some((r) => r.outcome !== 'removed')) throw new ReportedFailure();
    });
}

/**
 * Looks the session up (by session id, else container name), checks who protects it, then
 * takes it over (or adopts it with `force`) and removes it by id. `sessionId` in the result is
 * the argument as given.
 */
async function removeOne(arg: string, { prefix: given, force = false }: RmOptions, engine: EngineOptions): Promise<RmResult> {
  const base = { sessionId: arg, name: null, id: null };
  let found: Found | null;
  try {
    found = await lookUp(arg, given, engine);
  } catch (error) {
    if (BerthError.isInstance(error) && error.code !== 'E_ENGINE_UNAVAILABLE') return failed(base, error);
    throw error;
  }
  if (!found) return { ...base, outcome: 'absent', reason: 'no container holds its name', code: 'E_SESSION_NOT_FOUND' };
  const { session: s, sessionId, prefix } = found;
  const at = { sessionId: arg, name: s.name, id: s.id };
  if (!s.managed) {
    return { ...at, outcome: 'refused', reason: 'the container under its name is not managed by berth; berth never removes it', code: 'E_FOREIGN_CONTAINER' };
  }
  const alive = protectors(s);
  const words = alive.map((p) => `${p.role} pid ${p.pid ?? '?'} is ${p.liveness}`).join(', ');
  if (alive.length && !force) return { ...at, outcome: 'refused', reason: `${words} (--force removes it anyway)`, code: 'E_SESSION_BUSY' };
  try {
    const session = await resumeSession({ ...engine, sessionId, prefix, takeOver: true });
    if (session.ownership === 'adopted' && !force) {
      // Someone alive took the duty or a hold since the look-up: leave it to them.
      await session.release();
      return { ...at, outcome: 'refused', reason: `a live process holds it now (--force removes it anyway)`, code: 'E_SESSION_BUSY' };
    }
    const removed = await session.remove({ force: session.ownership === 'adopted' });
    if (!removed.removed) return { ...at, outcome: 'absent', reason: `gone meanwhile (${removed.reason})`, code: 'E_SESSION_NOT_FOUND' };
    const duty = dutyHolder(s);
    const why = alive.length
      ? `forced: ${words}`
      : `${duty?.role ?? 'owner'} pid ${duty?.pid ?? '?'} is dead, no live holder; duty taken over`;
    return { ...at, outcome: 'removed', reason: why, code: null };
  } catch (error) {
    if (BerthError.isInstance(error) && error.code === 'E_SESSION_NOT_FOUND' && (error.details as { reason?: unknown })?.reason === 'expired') {
      // Past its lifetime: the resume itself removed it (by id), as any berth process does.
      return { ...at, outcome: 'removed', reason: 'expired: removed by id', code: null };
    }
    if (BerthError.isInstance(error) && error.code === 'E_SESSION_INCOMPLETE') {
      return { ...at, outcome: 'failed', reason: `${error.message} (\`berth reap\` removes it)`, code: error.code };
    }
    if (BerthError.isInstance(error) && error.code !== 'E_ENGINE_UNAVAILABLE') return failed(at, error);
    throw error;
  }
}

function failed(at: Pick<RmResult, 'sessionId' | 'name' | 'id'>, error: BerthError): RmResult {
  return { ...at, outcome: error.code === 'E_SESSION_BUSY' ? 'refused' : 'failed', reason: error.message, code: error.code };
}
