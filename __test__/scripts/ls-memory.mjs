// Run by cli-format.test.ts in a fresh process per mode: what `berth ls` does with 10,000
// sessions once the engine answered, in the mode given by BERTH_LS_MODE: `table` (render the
// table as the command does, piped: no width to fit) or `json` (`ls --json`: one JSON document).
// The output goes to stdout, which the test discards. Reports on stderr, as one JSON line:
// { mode, chars, ms, peakGrowth }: the process's peak RSS (getrusage's maxrss, so a peak inside
// synchronous code counts) after the output over the same reading once the listings were made, in bytes.
import { colours } from '../../dist/cli/colour.js';
import { renderSessions } from '../../dist/cli/commands/ls.js';
import { sessionJson } from '../../dist/cli/session-view.js';
import { fakeListings } from '../helpers/fake-listings.mjs';

const mode = process.env.BERTH_LS_MODE;
const now = Date.parse('2026-01-01T12:00:00Z');
const list = fakeListings(now, Number(process.env.BERTH_LS_COUNT ?? 10_000));
globalThis.gc?.();
const peakKiB = () => process.resourceUsage().maxRSS;
const base = peakKiB();
const started = performance.now();
let text;
if (mode === 'table') text = renderSessions(list, { c: colours(false), maxWidth: Infinity, now });
else if (mode === 'json') text = JSON.stringify({ sessions: list.map((s) => sessionJson(s, now)) });
else throw new Error(`BERTH_LS_MODE must be table or json, not ${mode}`);
// As the command writes it (processOutput's line and json): one write of the text and a newline.
await new Promise((resolve, reject) => process.stdout.write(`${text}\n`, (e) => (e ? reject(e) : resolve(undefined))));
const ms = performance.now() - started;
process.stderr.write(`${JSON.stringify({ mode, chars: text.length, ms, peakGrowth: (peakKiB() - base) * 1024 })}\n`);
