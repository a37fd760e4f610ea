// The per-run label: every container a test run makes carries `berth.test-run=<id>`, so the
// leak check can find (and remove) exactly this run's leftovers. The id comes from the env
// (set once by the vitest globalSetup and inherited by child processes).
import { randomBytes } from 'node:crypto';

/** Label key that marks this test run's containers. */
export const RUN_LABEL_KEY = 'berth.test-run';
/** Env variable carrying the run id to every process of the run. */
export const RUN_ENV = 'BERTH_TEST_RUN';

/** Sets `BERTH_TEST_RUN` to a fresh random id unless it is already set; returns it. */
export function initRunId() {
  process.env[RUN_ENV] ||= `r${randomBytes(5).toString('hex')}`;
  return process.env[RUN_ENV];
}

/** This run's id; throws when the vitest globalSetup did not set it. */
export function runId() {
  const id = process.env[RUN_ENV];
  if (!id) throw new Error(`${RUN_ENV} is unset: run tests through vitest (its globalSetup sets it)`);
  return id;
}

/** `{ 'berth.test-run': <id> }`: pass as `labels` to every container a test makes. */
export function testLabels() {
  return { [RUN_LABEL_KEY]: runId() };
}

let counter = 0;
/** A session id unique to this run and process, embedding the run id so names show it: `<run>-<name>-<pid>-<n>`. */
export function testSessionId(name = 's') {
  counter += 1;
  return `${runId()}-${name}-${process.pid}-${counter}`;
}
