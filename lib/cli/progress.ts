import { createSpinner } from 'nanospinner';
import type { Context } from './context';

/** How long an operation runs before its spinner appears, in milliseconds. */
export const SPINNER_DELAY_MS = 1000;

/**
 * Runs `work`; when it takes longer than {@link SPINNER_DELAY_MS} and progress may be drawn
 * (stdout and stderr are terminals, no `--json`), a spinner with `text` turns on stderr until
 * it settles, then is cleared. Nothing is drawn otherwise.
 */
export async function withProgress<T>(ctx: Context, text: string, work: () => Promise<T>): Promise<T> {
  if (!ctx.progress) return work();
  let spinner: ReturnType<typeof createSpinner> | undefined;
  const timer = setTimeout(() => {
    spinner = createSpinner(text, { stream: process.stderr }).start();
  }, SPINNER_DELAY_MS);
  try {
    return await work();
  } finally {
    clearTimeout(timer);
    spinner?.stop();
    spinner?.clear();
    // nanospinner hides the cursor while it spins.
    if (spinner) process.stderr.write('\u001b[?25h');
  }
}
