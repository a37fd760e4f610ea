// The targets, checked against this run's figures (reported, never asserted).

const median = (rs, pred) => rs?.find(pred)?.median;
const isBerth = (r) => r.name.startsWith('berth');

/** One entry per target: name, goal, measured (text), met, ratio where there is one. */
export function evaluateTargets(results) {
  const t = results.timings;
  const out = [];
  const ratio = (rs, other) => {
    const b = median(rs, isBerth);
    const o = median(rs, (r) => r.name === other);
    return b && o ? b / o : undefined;
  };
  const push = (name, goal, value, met, text) =>
    value === undefined ? undefined : out.push({ name, goal, value, measured: text ?? value.toFixed(2), met });

  const peekFloor = ratio(t.peek, "raw (berth's requests)");
  push('peek vs the same raw requests', '≤ 1.20×', peekFloor, peekFloor <= 1.2, peekFloor && `${peekFloor.toFixed(2)}×`);
  const peekDockerode = ratio(t.peek, 'dockerode');
  push('peek vs dockerode', '< 1.00× dockerode', peekDockerode, peekDockerode < 1, peekDockerode && `${peekDockerode.toFixed(2)}×`);
  const create = ratio(t.create, "raw (berth's requests)");
  push('create-to-ready vs same raw requests', '≤ 1.05×', create, create <= 1.05, create && `${create.toFixed(2)}×`);
  const exec = ratio(t.exec, "raw (berth's requests)");
  push('exec vs same raw requests', '≤ 1.10×', exec, exec <= 1.1, exec && `${exec.toFixed(2)}×`);
  const turnB = median(t.turn, isBerth);
  const turnC = median(t.turn, (r) => r.name === 'docker CLI backend');
  if (turnB && turnC) push('agent turn speed-up over the CLI backend', '≥ 3.00×', turnC / turnB, turnC / turnB >= 3, `${(turnC / turnB).toFixed(2)}×`);
  if (results.eventLoop) push('event-loop delay p99', '< 5 ms', results.eventLoop.p99Ms, results.eventLoop.p99Ms < 5, `${results.eventLoop.p99Ms.toFixed(2)} ms`);
  if (results.rss) push(`RSS growth over ${results.rss.peeks} peeks`, '< 5 MB', results.rss.growthMB, results.rss.growthMB < 5, `${results.rss.growthMB.toFixed(2)} MB`);
  for (const c of results.concurrency ?? []) {
    if (c.name === 'berth') push(`${c.count} concurrent create+remove: leaks`, '0', c.leaked, c.leaked === 0 && c.failed === 0, `${c.leaked} leaked, ${c.failed} failed`);
  }
  return out;
}
