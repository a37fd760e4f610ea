import { CommanderError } from 'commander';
import { BerthError } from '../index';
import { EXIT, ReportedFailure } from './exit-codes';

/**
 * Reports a command's failure and returns the exit code: a usage error (already printed by
 * commander with the command's help) is {@link EXIT.usage}; a berth error prints
 * `E_CODE: message` on stderr (and with `--json`, `{"error":{code,message,details}}` on
 * stdout) and is {@link EXIT.failed}; anything else prints its message, never a stack trace
 * (set `BERTH_DEBUG=1` for one).
 */
export function reportError(error: unknown, { json }: { json: boolean }): number {
  // commander exits 0 after a help or version asked for, 1 after any usage error (help shown).
  if (error instanceof CommanderError) return error.exitCode === 0 ? EXIT.ok : EXIT.usage;
  if (error instanceof ReportedFailure) return EXIT.failed;
  if (process.env.BERTH_DEBUG && error instanceof Error) process.stderr.write(`${error.stack}\n`);
  if (BerthError.isInstance(error)) {
    if (json) process.stdout.write(`${JSON.stringify({ error: { code: error.code, message: error.message, details: error.details } })}\n`);
    process.stderr.write(`${error.code}: ${error.message}\n`);
    return EXIT.failed;
  }
  const message = error instanceof Error ? error.message : String(error);
  if (json) process.stdout.write(`${JSON.stringify({ error: { code: null, message } })}\n`);
  process.stderr.write(`berth: ${message}\n`);
  return EXIT.failed;
}
