// `berth ls` on a real 80-column terminal (tmux): the table fits and stays aligned, and colours
// appear there but not when the output is piped; a slow engine shows a spinner that is gone
// from the screen once the table is drawn, and none under a `CI` variable. Skipped, saying why, without tmux
// (`apt-get install tmux`; CI installs it in .ci/steps/16-test-services.sh).
import { spawn, spawnSync } from 'node:child_process';
import { afterAll, expect } from 'vitest';
import { createSession } from '../../index.mjs';
import { BERTH_BIN } from '../helpers/berth-cli.js';
import { request, startEngineProxy } from '../helpers/engine-proxy.mjs';
import { sessionTest as test } from '../helpers/fixtures.js';
import { expectNoRecordLeaks } from '../helpers/records.mjs';
import { runId } from '../helpers/run-label.mjs';
import { testSocketPath } from '../helpers/test-engine.mjs';
import { TEST_IMAGE } from '../helpers/test-image.mjs';
import { openPane, shellQuote, tmuxAvailable } from '../helpers/tmux.js';
import { engineSuite } from '../helpers/suite.js';

// eslint-disable-next-line no-control-regex
const ESCAPE = /\u001b\[[0-9;]*m/g;

engineSuite('berth on a terminal', () => {
  afterAll(async () => {
    await expectNoRecordLeaks();
  });

  test('ls renders aligned within 80 columns, in colour; piped, no colour, and with --wide nothing cut', async ({ sessionId, labels, engine, track, skip }) => {
    if (!tmuxAvailable()) skip('tmux is not installed (apt-get install tmux): the terminal check is skipped');
    const scope = { ...labels, 'berth.test-case': sessionId };
    for (const suffix of ['first-session-with-a-long-id', 'second']) {
      track(await createSession({ ...engine, sessionId: `${sessionId}-${suffix}`, image: TEST_IMAGE, labels: scope, ports: [8080, 9090] }));
    }
    const flags = Object.entries(scope).map(([k, v]) => `--label ${shellQuote(`${k}=${v}`)}`).join(' ');
    const ls = `${shellQuote(process.execPath)} ${shellQuote(BERTH_BIN)} ls ${flags}`;
    const pane = openPane(`berth-${runId()}-${process.pid}`, `env -u NO_COLOR sh -c ${shellQuote(`${ls}; echo __tty__; ${ls} --wide | cat; echo __piped__; sleep 600`)}`);
    try {
      const screen = await pane.waitFor('__piped__');
      const [tty, piped] = screen.split('__tty__\n') as [string, string];

      expect(tty).toMatch(ESCAPE);
      const lines = tty.replace(ESCAPE, '').trimEnd().split('\n');
      expect(lines).toHaveLength(3);
      for (const line of lines) expect(line.length, line).toBeLessThanOrEqual(80);
      const [head, ...rows] = lines as [string, ...string[]];
      // NAME (the derived container name, also in `peek` and --json) gives way at 80 columns.
      expect(head).toMatch(/^SESSION +STATE +READY +OWNER +HOLDERS +AGE +IMAGE +PORTS$/);
      const starts = [...head.matchAll(/\S+/g)].map((m) => m.index);
      for (const row of rows) {
        for (const at of starts.slice(1)) {
          expect(`${row[at - 1]}${row[at]}`, `column at ${at} of ${JSON.stringify(row)}`).toMatch(/^ \S$/);
        }
        expect(row).toContain(`${process.pid} alive`);
      }
      expect(tty).toContain('…');

      const plain = piped.slice(0, piped.indexOf('__piped__'));
      expect(plain).not.toMatch(ESCAPE);
      // --wide: ids whole (without it, ids over 40 characters are shortened head…tail).
      expect(plain).not.toContain('…');
      expect(plain).toContain(`${sessionId}-first-session-with-a-long-id`);
      expect(plain).toMatch(/^SESSION +NAME +STATE +READY +OWNER +HOLDERS +AGE +IMAGE +PORTS$/m);
    } finally {
      pane.close();
    }
  });

  test.for([
    ['without CI', 'env -u CI', true],
    ['under CI', 'env CI=true', false],
  ] as const)('a listing held 2.5 s: the spinner (%s) never stays on the screen', async ([, envPrefix, spins], { skip }) => {
    if (!tmuxAvailable()) skip('tmux is not installed (apt-get install tmux): the terminal check is skipped');
    const proxy = await startEngineProxy({ target: testSocketPath() });
    const held = proxy.hold(request('GET', /^\/containers\/json/));
    const ls = `${shellQuote(process.execPath)} ${shellQuote(BERTH_BIN)} ls --socket ${shellQuote(proxy.socketPath)} --label berth.test-spinner=${runId()}`;
    const pane = openPane(`berth-spin-${runId()}-${process.pid}`, `${envPrefix} sh -c ${shellQuote(`${ls}; echo __done__; sleep 600`)}`);
    try {
      await held.arrived;
      await new Promise((r) => setTimeout(r, 2500));
      const during = pane.capture();
      held.release();
      const screen = await pane.waitFor('__done__');
      if (spins) expect(during).toContain('listing sessions');
      else expect(during).not.toContain('listing sessions');
      const text = screen.replace(ESCAPE, '');
      expect(text).not.toContain('listing sessions');
      expect(text.trimStart()).toMatch(/^(no sessions|SESSION )/);
    } finally {
      pane.close();
      await proxy.close();
    }
  });

  test('a pty with no window size (0 columns) draws no spinner and the listing ends', async ({ skip }) => {
    if (spawnSync('script', ['--version']).status !== 0) skip('script (util-linux) is not installed: the 0-column check is skipped');
    const proxy = await startEngineProxy({ target: testSocketPath() });
    const held = proxy.hold(request('GET', /^\/containers\/json/));
    const ls = `${shellQuote(process.execPath)} ${shellQuote(BERTH_BIN)} ls --socket ${shellQuote(proxy.socketPath)} --label berth.test-spinner=${runId()}`;
    const env: NodeJS.ProcessEnv = { ...process.env, TERM: 'xterm' };
    delete env.CI;
    // `script` runs the command on a new pty; with no terminal of its own it sets no size.
    // Its own process group, so that a hung `berth` under `script` is killed with it.
    const child = spawn('script', ['-qec', `stty size; ${ls}`, '/dev/null'], { env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    const killGroup = (): void => {
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        // already gone
      }
    };
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    try {
      await held.arrived;
      await new Promise((r) => setTimeout(r, 2500));
      held.release();
      const bound = setTimeout(killGroup, 60_000);
      const code = await exited;
      clearTimeout(bound);
      expect(output).toMatch(/^0 0/);
      expect(code).toBe(0);
      expect(output).not.toContain('listing sessions');
      expect(output.length).toBeLessThan(4096);
    } finally {
      killGroup();
      await proxy.close();
    }
  });
});
