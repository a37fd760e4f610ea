// Contender names shared by the suites, the targets and the report.

/** The one-command suite's contenders (`--only run`). */
export const RUN_CONTENDERS = {
  harness: 'berth harness run `true`',
  exec: "berth session.exec(['true']), engine exec",
  raw: 'raw exec (3 requests)',
  cli: 'docker exec',
};

/** The agent-turn suites' contenders. */
export const TURN_CONTENDERS = {
  berth: 'berth (harness provider)',
  cli: 'docker CLI backend',
};

/** The file-write suite's contenders (`--only write`). */
export const WRITE_CONTENDERS = {
  write: 'berth harness writeTextFile 4 KiB',
  run: 'berth harness run `true`',
};
