import { fileURLToPath } from 'node:url';
import { runNode } from './node-process.js';
import { testLabels, testSessionId } from './run-label.mjs';

const SCRIPT = fileURLToPath(new URL('../scripts/hostile-memory.mjs', import.meta.url));

/** One case's report from `scripts/hostile-memory.mjs`. */
export interface HostileReport {
  case: string;
  /** How long the call took to settle, in ms (reported, never asserted). */
  ms: number;
  /** Peak RSS of the child over its RSS before the case, in bytes. */
  rssGrowth: number;
  /** The same peak over the child's RSS before its first case (once its sessions existed), in bytes. */
  rssOverStart: number;
  value?: any;
  error?: { name?: string; code?: string; messageLength: number; details?: Record<string, any> };
}

/**
 * Runs `cases` of `scripts/hostile-memory.mjs` in a fresh `node --expose-gc` (so the RSS measured
 * is berth's alone) and answers each case's report by name. The child is SIGKILLed after
 * `killAfterMs` (a bound for a hung call: the missing reports then fail the test).
 */
export async function runHostile(cases: string[], killAfterMs: number): Promise<Map<string, HostileReport>> {
  const run = await runNode(
    ['--expose-gc', SCRIPT],
    {
      BERTH_HOSTILE_SESSION: testSessionId('hostile'),
      BERTH_HOSTILE_LABELS: JSON.stringify(testLabels()),
      BERTH_HOSTILE_CASES: cases.join(','),
    },
    killAfterMs,
  );
  const reports = new Map<string, HostileReport>();
  for (const line of run.stdout.split('\n')) {
    if (!line.startsWith('{')) continue;
    const r = JSON.parse(line) as HostileReport;
    reports.set(r.case, r);
    // The measured numbers, for the log (never asserted as timings).
    console.log(`${r.case}: settled in ${r.ms} ms, RSS +${(r.rssGrowth / 1048576).toFixed(1)} MiB (+${(r.rssOverStart / 1048576).toFixed(1)} MiB over the first case's start)`);
  }
  if (run.code !== 0 || run.killed) {
    throw new Error(`hostile-memory exited ${run.code} (killed: ${run.killed}) after ${[...reports.keys()].join(', ')}\n${run.stderr}`);
  }
  return reports;
}
