/**
 * The owner's policy's cost (issue #12): what the policy decision adds to a
 * trivial `tools/call` round trip.
 *
 * 1. The decision alone, in process: `decideCall` for `ledger_echo` (rules
 *    read from the 1-second cache, 20 rules none of which match, then the
 *    default) — its median, as a share of the median loopback HTTP round trip
 *    of the same call measured in the same run: ratio = (round trip +
 *    decision) / round trip.
 * 2. Round trips over HTTP (SDK v2 client, 2025 era) to two Airlock servers
 *    in this process, interleaved: one with no rules, one with 20 rules that
 *    do not match (every rule is tried, then the default decides). A call a
 *    rule decides is also audited (a store write): that cost is the rule's,
 *    paid only for what the owner chose to watch.
 *
 * Run with `BENCH_PARTS=policy npm run bench` (part of bench/run.mjs).
 */
import { connection } from '../dist/kernel/connection.js';
import { decideCall } from '../dist/kernel/authority/decide.js';
import { airlockHttp, airlockKernel, connect } from './servers.mjs';

const RULES = Array.from({ length: 20 }, (_, i) => ({
  door: `door-${i}`,
  tool: `tool_${i}_*`,
  target: `target:${i}:*`,
  decision: 'deny',
}));

export async function benchPolicy({ interleave, sequential, stats, ratio, calls }) {
  const plain = await airlockKernel();
  const ruled = await airlockKernel();
  for (const rule of RULES) await ruled.kernel.policy.add(rule);
  const servers = [
    ['no rules', plain, await airlockHttp(plain.kernel)],
    ['20 rules', ruled, await airlockHttp(ruled.kernel)],
  ];
  const legs = [];
  const clients = [];
  for (const [key, , http] of servers) {
    const client = await connect(http.url, 'legacy', http.token);
    clients.push(client);
    const run = sequential(async () => {
      const r = await client.callTool({ name: 'ledger_echo', arguments: { text: 'hello' } });
      if (r.isError) throw new Error(`${key}: ${JSON.stringify(r).slice(0, 200)}`);
    });
    await run(200);
    legs.push({ key, run });
  }
  const samples = await interleave(legs, calls);

  // The decision alone, as the pipeline makes it for this call.
  const tool = ruled.kernel.tool('ledger', 'ledger_echo');
  const conn = connection('agent:bench', 'http-principal', undefined, 'bench');
  const decide = sequential(async () => {
    const d = await decideCall(
      ruled.kernel,
      { door: 'ledger', mount: 'ledger', tool },
      { text: 'hello' },
      conn,
      'read',
    );
    if (d.refusal) throw new Error(`decision refused: ${d.refusal.message}`);
  });
  await decide(1000);
  const decision = stats(await decide(calls * 5));

  for (const c of clients) await c.close();
  for (const [, k, http] of servers) {
    await http.close();
    await k.close();
  }
  const rows = legs.map((l) => ({
    server: l.key,
    ...stats(samples.get(l.key).ns, samples.get(l.key).wallNs),
  }));
  const [none, many] = rows;
  return {
    rows,
    decision,
    ratios: {
      decisionShareOfRoundTrip: ratio(none.medianUs + decision.medianUs, none.medianUs),
      rules20OverNone: {
        median: ratio(many.medianUs, none.medianUs),
        p95: ratio(many.p95Us, none.p95Us),
      },
    },
  };
}

export function printPolicy(results, table) {
  console.log(
    'owner policy: ledger_echo over loopback HTTP (2025 era), no rules against 20 rules that do not match\n',
  );
  console.log(
    table(
      ['server', 'median µs', 'p95 µs', 'calls/s'],
      results.rows.map((r) => [r.server, r.medianUs, r.p95Us, r.perSecond]),
    ),
  );
  console.log(
    `policy decision alone (in process, 20 rules tried): median ${results.decision.medianUs} µs, p95 ${results.decision.p95Us} µs`,
  );
  console.log(
    `round trip with the decision / without: ×${results.ratios.decisionShareOfRoundTrip} (target ≤ ×1.05); 20 rules / no rules: median ×${results.ratios.rules20OverNone.median}, p95 ×${results.ratios.rules20OverNone.p95}\n`,
  );
}
