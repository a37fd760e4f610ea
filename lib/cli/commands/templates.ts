import type { Command } from 'commander';
import { listTemplates, pruneTemplates, removeTemplate, TEMPLATE_REPO } from '../../index';
import { collectLabel, parseAge } from '../arguments';
import { contextOf } from '../context';
import { ReportedFailure } from '../exit-codes';
import { age, bytes, labelList, shortId } from '../format';
import { withProgress } from '../progress';
import { renderTable } from '../table';

/** `berth templates ls | rm <key> | prune`: the template images (`berth-template:<key>`). */
export function registerTemplates(program: Command): void {
  const templates = program
    .command('templates')
    .description(`template images (${TEMPLATE_REPO}:<key>), e.g. those the harness provider commits per identity`);

  templates
    .command('ls')
    .alias('list')
    .description('list template images')
    .option('--label <key=value>', 'only templates carrying this label (repeatable)', collectLabel)
    .action(async (options: { label?: Record<string, string> }, command: Command) => {
      const ctx = contextOf(command);
      const list = await withProgress(ctx, 'listing templates', () => listTemplates({ ...ctx.engine, labels: options.label }));
      if (ctx.json) return ctx.out.json({ templates: list });
      const { c } = ctx.out;
      if (list.length === 0) return ctx.out.line(c.dim('no templates'));
      const now = Date.now();
      const rows = list.map((t) => [t.key, shortId(t.id), age(t.createdMs, now), age(t.lastUsedMs, now), bytes(t.size), labelList(t.labels)]);
      const columns = [
        { head: 'KEY', shrink: 2 },
        { head: 'IMAGE ID' },
        { head: 'CREATED' },
        { head: 'LAST USED' },
        { head: 'SIZE' },
        { head: 'LABELS', shrink: 3 },
      ];
      ctx.out.line(renderTable(columns, rows, { maxWidth: ctx.columns, bold: c.bold }));
    });

  templates
    .command('rm')
    .description('remove one template image, unless a container uses it (never forced)')
    .argument('<key>', `the template key (the tag of ${TEMPLATE_REPO}:<key>)`)
    .action(async (key: string, _options: object, command: Command) => {
      const ctx = contextOf(command);
      const outcome = await withProgress(ctx, `removing ${key}`, () => removeTemplate(key, ctx.engine));
      if (ctx.json) ctx.out.json({ key, reference: `${TEMPLATE_REPO}:${key}`, outcome });
      else if (outcome === 'removed') ctx.out.line(`${TEMPLATE_REPO}:${key}: ${ctx.out.c.green('removed')}`);
      else if (outcome === 'in-use') ctx.out.note(`${TEMPLATE_REPO}:${key}: kept: a container uses it`);
      else ctx.out.note(`${TEMPLATE_REPO}:${key}: no such template`);
      if (outcome !== 'removed') throw new ReportedFailure();
    });

  templates
    .command('prune')
    .description('remove every template image no container uses (with --unused-for, only those unused that long)')
    .option('--label <key=value>', 'only templates carrying this label (repeatable)', collectLabel)
    .option('--unused-for <age>', 'only templates last used at least this long ago: 7d, 12h, 30m, 45s, 500ms', parseAge)
    .action(async (options: { label?: Record<string, string>; unusedFor?: number }, command: Command) => {
      const ctx = contextOf(command);
      const age = options.unusedFor === undefined ? {} : { unusedForMs: options.unusedFor };
      const r = await withProgress(ctx, 'pruning templates', () => pruneTemplates({ ...ctx.engine, labels: options.label, ...age }));
      if (ctx.json) return ctx.out.json(r);
      for (const key of r.removed) ctx.out.line(`${TEMPLATE_REPO}:${key}: ${ctx.out.c.green('removed')}`);
      for (const key of r.kept) ctx.out.line(`${TEMPLATE_REPO}:${key}: kept (a container uses it)`);
      ctx.out.line(`${r.removed.length} removed, ${r.kept.length} kept, ${r.recent.length} used recently`);
    });
}
