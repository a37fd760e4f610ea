// The consumer run's label and engine: every container this suite makes carries
// `berth.consumer-run=<id>`, so the teardown can prove nothing leaked.
import { randomBytes } from 'node:crypto';

/** Label key of this suite's containers. */
export const RUN_LABEL_KEY = 'berth.consumer-run';
/** Env variable carrying the run id to the test processes. */
export const RUN_ENV = 'BERTH_CONSUMER_RUN';

/** Sets the run id unless set; returns it. */
export function initRun(): string {
  process.env[RUN_ENV] ||= `c${randomBytes(5).toString('hex')}`;
  return process.env[RUN_ENV];
}

/** `{ 'berth.consumer-run': <id> }`. */
export function runLabels(): Record<string, string> {
  const id = process.env[RUN_ENV];
  if (!id) throw new Error(`${RUN_ENV} is unset: run through vitest (its globalSetup sets it)`);
  return { [RUN_LABEL_KEY]: id };
}

/** The image the suite runs (CI passes the offline test image). */
export const IMAGE = process.env.BERTH_CONSUMER_IMAGE ?? 'berth-test/busybox:1';

let n = 0;
/** A sandbox id unique to this run and process. */
export function uniqueId(name: string): string {
  n += 1;
  return `${process.env[RUN_ENV]}-${name}-${process.pid}-${n}`;
}
