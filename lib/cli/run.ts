import { buildProgram } from './program';
import { reportError } from './report-error';

/**
 * Runs the `berth` command line `argv` (as `process.argv`: node, script, arguments) and
 * resolves its exit code (see `exit-codes.ts`); never rejects.
 */
export async function run(argv: string[]): Promise<number> {
  const program = buildProgram();
  try {
    await program.parseAsync(argv);
    return 0;
  } catch (error) {
    return reportError(error, { json: argv.includes('--json') });
  }
}
