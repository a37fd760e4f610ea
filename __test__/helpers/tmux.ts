// A real terminal for tests: a private tmux server (`tmux -L <name>`, never the user's) with one
// detached pane of a given size running a shell command; its screen is read back with colour
// escapes (`capture-pane -e`), wrapped lines joined (`-J`).
import { spawnSync } from 'node:child_process';

/** True when tmux is installed. */
export function tmuxAvailable(): boolean {
  return spawnSync('tmux', ['-V'], { encoding: 'utf8' }).status === 0;
}

/** A pane in a private tmux server. */
export interface Pane {
  /** The screen and its scrollback, one logical line per line, colour escapes kept. */
  capture(): string;
  /** Resolves the capture once it contains `marker`, or rejects after `timeoutMs`. */
  waitFor(marker: string, timeoutMs?: number): Promise<string>;
  /** Ends the private server (and the pane's command). */
  close(): void;
}

/** Single-quotes `s` for sh. */
export function shellQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

/** Starts `command` (run by sh) in a detached `columns` x `rows` pane of a private tmux server named `server`. */
export function openPane(server: string, command: string, { columns = 80, rows = 60 } = {}): Pane {
  const tmux = (...args: string[]): string => {
    const r = spawnSync('tmux', ['-L', server, ...args], { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`tmux ${args[0]}: ${r.stderr}`);
    return r.stdout;
  };
  tmux('-f', '/dev/null', 'new-session', '-d', '-s', 'berth', '-x', String(columns), '-y', String(rows), command);
  const capture = (): string => tmux('capture-pane', '-p', '-e', '-J', '-t', 'berth', '-S', '-', '-E', '-');
  return {
    capture,
    waitFor: async (marker, timeoutMs = 60_000) => {
      const until = Date.now() + timeoutMs;
      for (;;) {
        const screen = capture();
        if (screen.includes(marker)) return screen;
        if (Date.now() > until) throw new Error(`tmux pane never showed ${marker}; screen:\n${screen}`);
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    },
    close: () => void spawnSync('tmux', ['-L', server, 'kill-server']),
  };
}
