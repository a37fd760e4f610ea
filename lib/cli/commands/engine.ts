import type { Command } from 'commander';
import { engineInfo } from '../../index';
import { contextOf } from '../context';
import { yesNo } from '../format';
import { withProgress } from '../progress';
import { renderPairs } from '../table';

/** `berth engine`: what engineInfo reports, and which discovery rule chose the engine. */
export function registerEngine(program: Command): void {
  program
    .command('engine')
    .description('show the engine berth reaches: kind, version, endpoint, rootless, remote, and which rule chose it')
    .action(async (_options: object, command: Command) => {
      const ctx = contextOf(command);
      const info = await withProgress(ctx, 'connecting to the engine', () => engineInfo(ctx.engine));
      if (ctx.json) return ctx.out.json({ engine: info });
      const pairs: [string, string][] = [
        ['kind', info.kind],
        ['version', info.version],
        ['api version', info.apiVersion],
        ['endpoint', info.endpoint],
        ['rootless', yesNo(info.rootless)],
        ['remote', yesNo(info.remote)],
        ['chosen by', info.strategy],
      ];
      ctx.out.line(renderPairs(pairs, { bold: ctx.out.c.bold }));
    });
}
