/**
 * Where a trivial call's time goes, Airlock against a bare SDK server, in
 * one profile (issue 31's per-call path). The echo servers' child (the
 * `calls` part's `main` variant: every server in one process) is profiled
 * while the two are called in interleaved rounds; each CPU sample is charged
 * to the server whose round it fell in (the child marks each round on the
 * profile's clock). Printed: wall and busy (non-idle) µs per call of each,
 * then every function's self time per call, the largest differences first.
 *
 * The machine's drift falls on both servers alike, so the difference holds
 * where two profiles taken one after the other do not (on this VM the same
 * server's CPU per call moved ×2 between consecutive runs). Self times are
 * sampled (100 µs) and include builtins run on a function's behalf (awaits,
 * spreads); a syscall's time is charged to its binding (`writev`, `read`).
 *
 *   npm run build && node bench/profile-calls.mjs [era] [rounds] [calls per round] [warm-up calls]
 *
 * era: legacy (default) or modern. BENCH_PROFILE_SERVERS=a,b (default
 * airlock,sdk-server). The raw profile, marks included, goes to
 * bench/results/calls-split.cpuprofile.
 */
import { fork } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { connect } from './servers.mjs';

const [era = 'legacy', ROUNDS = '30', ROUND = '100', WARM = '4000'] = process.argv.slice(2);
const servers = (process.env.BENCH_PROFILE_SERVERS ?? 'airlock,sdk-server').split(',');
const out = fileURLToPath(new URL('./results/calls-split.cpuprofile', import.meta.url));
mkdirSync(fileURLToPath(new URL('./results/', import.meta.url)), { recursive: true });

const child = fork(fileURLToPath(new URL('./servers.mjs', import.meta.url)), [], {
  stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  env: { ...process.env, BENCH_ECHO_VARIANT: 'main' },
});
const { urls, tokens } = await new Promise((resolve) => child.once('message', resolve));
const ask = (message) =>
  new Promise((resolve) => {
    child.once('message', resolve);
    child.send(message);
  });
const clients = {};
for (const s of servers) {
  if (!urls[s]) throw new Error(`no server '${s}'; the main variant serves ${Object.keys(urls)}`);
  clients[s] = await connect(urls[s], era, tokens[s]);
}
const call = (s) => clients[s].callTool({ name: 'ledger_echo', arguments: { text: 'hello' } });
process.stderr.write(`warming up: ${WARM} calls each\n`);
for (const s of servers) for (let i = 0; i < Number(WARM); i++) await call(s);
await ask('profile-start');
for (let r = 0; r < Number(ROUNDS); r++) {
  for (const s of r % 2 ? [...servers].reverse() : servers) {
    await ask({ mark: `${s}\u0000start` });
    for (let i = 0; i < Number(ROUND); i++) await call(s);
    await ask({ mark: `${s}\u0000end` });
  }
}
await ask({ profileTo: out });
for (const s of servers) await clients[s].close();
child.send('close');
await new Promise((resolve) => child.once('exit', resolve));

const profile = JSON.parse(readFileSync(out, 'utf8'));
const calls = Number(ROUNDS) * Number(ROUND);
const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
const windows = [];
const opened = {};
for (const { label, t } of profile.marks) {
  const [s, edge] = label.split('\u0000');
  if (edge === 'start') opened[s] = t;
  else windows.push({ s, from: opened[s], to: t });
}
windows.sort((a, b) => a.from - b.from);
const short = (url) =>
  url
    .replace(/.*node_modules\//, '')
    .replace(/.*\/dist\//, 'dist/')
    .replace(/.*\/bench\//, 'bench/');
const keyOf = ({ callFrame: f }) =>
  `${f.functionName || '(anonymous)'} ${short(f.url)}:${f.lineNumber + 1}`;
const self = Object.fromEntries(servers.map((s) => [s, new Map()]));
const busy = Object.fromEntries(servers.map((s) => [s, 0]));
const wall = Object.fromEntries(servers.map((s) => [s, 0]));
for (const w of windows) wall[w.s] += w.to - w.from;
let t = profile.startTime;
let w = 0;
let charged = 0;
for (let i = 0; i < profile.samples.length; i++) {
  const dt = profile.timeDeltas[i] ?? 0;
  t += dt;
  while (w < windows.length && windows[w].to < t) w++;
  const win = windows[w];
  if (!win || t < win.from) continue;
  charged++;
  const key = keyOf(nodes.get(profile.samples[i]));
  self[win.s].set(key, (self[win.s].get(key) ?? 0) + dt);
  if (!key.startsWith('(idle)')) busy[win.s] += dt;
}
const [a, b] = servers;
const per = (us) => (us / calls).toFixed(1).padStart(7);
console.log(
  `${era} era, ${ROUNDS} interleaved rounds of ${ROUND} calls each, after ${WARM} warm-up calls; ${charged} of ${profile.samples.length} samples fell in a round`,
);
console.log(`wall µs/call: ${a} ${per(wall[a])}, ${b} ${per(wall[b])}`);
console.log(`busy µs/call: ${a} ${per(busy[a])}, ${b} ${per(busy[b])}`);
console.log(`self time µs/call: ${a} − ${b}, ${a}, ${b}, function`);
const keys = new Set([...self[a].keys(), ...self[b].keys()]);
const rows = [...keys]
  .filter((k) => !k.startsWith('(idle)'))
  .map((k) => [k, self[a].get(k) ?? 0, self[b].get(k) ?? 0])
  .sort((x, y) => y[1] - y[2] - (x[1] - x[2]));
const line = ([k, x, y]) => console.log(`${per(x - y)} ${per(x)} ${per(y)}  ${k}`);
rows.slice(0, Number(process.env.BENCH_PROFILE_TOP ?? 40)).forEach(line);
console.log(`… most in ${b}:`);
rows.slice(-8).forEach(line);
