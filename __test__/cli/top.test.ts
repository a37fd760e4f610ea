// `berth top` (docs/cli.md): usage figures of the selected berth sessions, `--json` one object
// per session per sample, `--once` one round, the live loop ending cleanly on SIGINT.
import { expect } from 'vitest';
import { createSession } from '../../index.mjs';
import { runBerth, startBerth } from '../helpers/berth-cli.js';
import { sessionTest as test } from '../helpers/fixtures.js';
import { engineSuite } from '../helpers/suite.js';
import { TEST_IMAGE } from '../helpers/test-image.mjs';

const CASE_LABEL = 'berth.test-case';

engineSuite('berth top', () => {
  test('--json --once: one line per session with its figures; the table once; the live loop stops on SIGINT', async ({ engine, sessionId, labels, track }) => {
    const scope = { ...labels, [CASE_LABEL]: sessionId };
    const flags = ['--socket', engine.socketPath, ...Object.entries(scope).flatMap(([k, v]) => ['--label', `${k}=${v}`])];
    const sessions = await Promise.all(
      ['a', 'b', 'c'].map(async (x) => track(await createSession({ ...engine, sessionId: `${sessionId}-${x}`, labels: scope, image: TEST_IMAGE, pidsLimit: 50 }))),
    );

    const json = await runBerth(['--json', 'top', '--once', ...flags]);
    expect(json.code, json.stderr).toBe(0);
    const lines = json.stdout.trim().split('\n').map((l) => JSON.parse(l));
    expect(lines).toHaveLength(3);
    expect(lines.map((l) => l.id).sort()).toEqual(sessions.map((s) => s.id).sort());
    for (const l of lines) {
      const own = sessions.find((s) => s.id === l.id)!;
      expect(l).toMatchObject({ sessionId: own.sessionId, name: own.name, state: 'running', running: true, pids: { limit: 50 } });
      // The first round is primed: its CPU share is measured.
      expect(typeof l.cpu.percent).toBe('number');
      expect(l.memory.usedBytes).toBeGreaterThan(0);
      expect(typeof l.sampledAt).toBe('number');
    }

    const table = await runBerth(['top', '--once', '--wide', ...flags]);
    expect(table.code, table.stderr).toBe(0);
    const rows = table.stdout.trim().split('\n');
    expect(rows[0]).toMatch(/^SESSION\s+NAME\s+STATE\s+CPU %\s+MEM USAGE \/ LIMIT\s+MEM %\s+PIDS\s+NET I\/O\s+BLOCK I\/O$/);
    expect(rows).toHaveLength(4);
    for (const s of sessions) expect(rows.some((r) => r.startsWith(s.sessionId) && r.includes(s.name) && / \/ 50 /.test(r))).toBe(true);

    const live = startBerth(['--json', 'top', '--interval', '300ms', ...flags]);
    await live.waitForLine((l) => JSON.parse(l).id === sessions[0]!.id);
    expect(await live.stop('SIGINT')).toEqual({ code: 0, signal: null });

    const none = await runBerth(['top', '--once', '--socket', engine.socketPath, '--label', `${CASE_LABEL}=${sessionId}-none`]);
    expect(none.stdout.trim()).toBe('no sessions');
    const bad = await runBerth(['top', '--interval', '5ms']);
    expect(bad.code).toBe(2);
  });
});
