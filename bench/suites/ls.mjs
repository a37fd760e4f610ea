// The `ls` suite: what `berth ls` does with 10,000 sessions once the engine answered, table
// against `--json`, each in a fresh node process (as the command runs: cold, once), in turns.
// Pure rendering: the listings are made up (`__test__/helpers/fake-listings.mjs`), no engine.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { quantile } from '../lib/stats.mjs';

const median = (values) => quantile(values, 0.5);

const SCRIPT = fileURLToPath(new URL('../../__test__/scripts/ls-memory.mjs', import.meta.url));

/** One run of the script in `mode`: its report ({ mode, chars, ms, peakGrowth }). */
function once(mode, count) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--expose-gc', SCRIPT], { env: { ...process.env, BERTH_LS_MODE: mode, BERTH_LS_COUNT: String(count) }, stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    child.stderr.on('data', (c) => (err += c));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(JSON.parse(err.trim().split('\n').at(-1))) : reject(new Error(`ls-memory ${mode} exited ${code}: ${err}`))));
  });
}

/**
 * `rounds` of both modes (the order alternating): the median time (ms, from the listings to
 * the output written) and peak RSS growth (MiB, getrusage's maxrss) of each, and the ratios.
 */
export async function lsSuite({ sessions, rounds }) {
  const runs = { table: [], json: [] };
  for (let r = 0; r < rounds; r++) {
    for (const mode of r % 2 ? ['json', 'table'] : ['table', 'json']) runs[mode].push(await once(mode, sessions));
  }
  const summary = (rs) => ({ ms: median(rs.map((x) => x.ms)), peakGrowthMB: median(rs.map((x) => x.peakGrowth / 2 ** 20)), chars: rs[0].chars });
  const table = summary(runs.table);
  const json = summary(runs.json);
  return { sessions, rounds, table, json, timeRatio: table.ms / json.ms, memoryRatio: table.peakGrowthMB / json.peakGrowthMB };
}
