// berth's commands go over its command channel unless `BERTH_COMMAND_CHANNEL=0` is set (read
// by the native side at each command). The suites that measure berth's engine exec (the exec
// micro suite, the recorded requests, `session.exec` in the one-command suite) run it with
// the channel off. Calls inside must not overlap with calls meant for the channel.

/** Runs `fn` with the command channel off: its commands take the engine exec path. */
export async function overEngine(fn) {
  const before = process.env.BERTH_COMMAND_CHANNEL;
  process.env.BERTH_COMMAND_CHANNEL = '0';
  try {
    return await fn();
  } finally {
    if (before === undefined) delete process.env.BERTH_COMMAND_CHANNEL;
    else process.env.BERTH_COMMAND_CHANNEL = before;
  }
}
