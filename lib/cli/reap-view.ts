import type { ReapEntry, ReapReport } from '../index';
import type { Colours } from './colour';
import { shortId } from './format';
import { renderTable } from './table';

/** The reaper's reason codes in words (see `ReapEntry.reason`). */
const REASONS: Record<string, string> = {
  'owner-dead': 'owner dead, no live holder',
  incomplete: 'setup never finished, creator dead',
  'owner-alive': 'owner alive',
  'owner-unknown': 'owner unknown (another host, or unreadable)',
  held: 'a live or unknown process holds it',
  parked: 'owner gone, kept until its lifetime ends',
  expired: 'past its lifetime',
  'remove-failed': 'removal failed (the next run retries)',
};

/** A reason code in words (an unknown code as is). */
export function reasonWords(reason: string): string {
  return REASONS[reason] ?? reason;
}

/**
 * The report as a table, one row per container: `ACTION` (`removed` / `would remove` / `kept`),
 * session, container id, name, reason; then a line about record volumes and settled recreations.
 */
export function renderReap(c: Colours, report: ReapReport, { dryRun, maxWidth }: { dryRun: boolean; maxWidth: number }): string {
  const row = (action: string, e: ReapEntry): string[] => [action, e.sessionId ?? '?', shortId(e.id), e.name, reasonWords(e.reason)];
  const rows = [
    ...report.removed.map((e) => row(dryRun ? c.yellow('would remove') : c.red('removed'), e)),
    ...report.kept.map((e) => row(c.green('kept'), e)),
  ];
  const lines: string[] = [];
  if (rows.length) {
    lines.push(
      renderTable(
        [{ head: 'ACTION' }, { head: 'SESSION', shrink: 2 }, { head: 'CONTAINER' }, { head: 'NAME', shrink: 3, optional: true }, { head: 'REASON' }],
        rows,
        { maxWidth, bold: c.bold },
      ),
    );
  }
  if (report.removedRecords.length) {
    lines.push(`${report.removedRecords.length} record volume(s) of containers already gone ${dryRun ? 'would be ' : ''}deleted`);
  }
  if (report.removedHelpers.length) {
    lines.push(`${report.removedHelpers.length} network helper container(s) left by a killed process ${dryRun ? 'would be ' : ''}removed`);
  }
  if (report.removedImages.length) {
    lines.push(`${report.removedImages.length} helper image(s) of other berth builds ${dryRun ? 'would be ' : ''}removed: ${report.removedImages.join(', ')}`);
  }
  for (const r of report.replacements) lines.push(`recreation of ${r.name} (was ${shortId(r.previousId)}): ${r.outcome}`);
  lines.push(summary(report, dryRun));
  return lines.join('\n');
}

/** `"1 removed, 2 kept"` / `"1 would be removed, 2 kept (dry run: nothing removed)"`. */
export function summary(report: ReapReport, dryRun: boolean): string {
  if (dryRun) return `${report.removed.length} would be removed, ${report.kept.length} kept (dry run: nothing removed)`;
  return `${report.removed.length} removed, ${report.kept.length} kept`;
}

/** The `--json` document of one reaper run (stable field names). */
export function reapJson(report: ReapReport, dryRun: boolean): Record<string, unknown> {
  return {
    dryRun,
    removed: report.removed,
    kept: report.kept,
    removedRecords: report.removedRecords,
    replacements: report.replacements,
    removedHelpers: report.removedHelpers,
    removedImages: report.removedImages,
  };
}
