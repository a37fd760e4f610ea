/** The `berth` command's exit codes. */
export const EXIT = {
  /** Everything asked for was done. */
  ok: 0,
  /** A berth error (its `E_CODE: message` printed), or something asked for was refused or failed. */
  failed: 1,
  /** Bad usage: unknown command, bad flag, missing argument (the command's help printed). */
  usage: 2,
} as const;

/**
 * A command's outcome that is a failure already reported per item (a refused `rm`, an in-use
 * template): the run exits {@link EXIT.failed} without printing anything more.
 */
export class ReportedFailure extends Error {
  constructor(message = 'failure already reported') {
    super(message);
    this.name = 'ReportedFailure';
  }
}
