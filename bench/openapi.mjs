/**
 * The openapi door's numbers (issue #5): for each document in
 * test/fixtures/openapi, compile time and peak memory (each compile in
 * a fresh process; the baseline is a process that only loads the compiler),
 * catalog load time (read + check + index a compiled catalog), and
 * `<prefix>_resources` latency through `kernel.call`, as a ratio against
 * `ledger_echo` measured in the same rounds.
 *
 * Run with `BENCH_PARTS=openapi npm run bench` (part of bench/run.mjs), or
 * `node bench/openapi.mjs` after `npm run build`. Env: BENCH_OPENAPI_DIR
 * (the fixtures folder), BENCH_OPENAPI_RUNS (3 compiles per document),
 * BENCH_OPENAPI_QUERIES (300 queries per row).
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const HERE = fileURLToPath(import.meta.url);
const DIR =
  process.env.BENCH_OPENAPI_DIR ??
  fileURLToPath(new URL('../test/fixtures/openapi/', import.meta.url));
const int = (name, fallback) => {
  const n = Number.parseInt(process.env[name] ?? '', 10);
  return Number.isFinite(n) && n > 0 ? n : fallback;
};
const RUNS = int('BENCH_OPENAPI_RUNS', 3);
const QUERIES = int('BENCH_OPENAPI_QUERIES', 300);

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const p95 = (xs) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * 0.95))];
const r1 = (x) => Math.round(x * 10) / 10;

// ---------------------------------------------------------------- child: one compile

async function child(file, out) {
  const { compileSpec, catalogJson } = await import('../dist/doors/openapi/compile/compile.js');
  if (file === '--baseline') {
    process.stdout.write(JSON.stringify({ maxRssMB: process.resourceUsage().maxRSS / 1024 }));
    return;
  }
  const t = performance.now();
  const catalog = await compileSpec(file);
  const ms = performance.now() - t;
  const text = catalogJson(catalog);
  writeFileSync(out, text);
  process.stdout.write(
    JSON.stringify({
      ms,
      maxRssMB: process.resourceUsage().maxRSS / 1024,
      catalogBytes: Buffer.byteLength(text),
      resources: catalog.resources.length,
      methods: catalog.resources.reduce((n, r) => n + r.methods.length, 0),
    }),
  );
}

const runChild = (args) =>
  new Promise((resolve, reject) =>
    execFile(
      process.execPath,
      [HERE, '--child', ...args],
      { maxBuffer: 1 << 20 },
      (error, stdout, stderr) =>
        error ? reject(new Error(`${error.message}\n${stderr}`)) : resolve(JSON.parse(stdout)),
    ),
  );

// ---------------------------------------------------------------- parent

export async function benchOpenapi() {
  const { parseCatalog } = await import('../dist/doors/openapi/catalog.js');
  const { indexCatalog } = await import('../dist/doors/openapi/catalog-index.js');
  const { createOpenapiDoor } = await import('../dist/doors/openapi/door.js');
  const { airlockKernel } = await import('./servers.mjs');
  const { connection } = await import('../dist/kernel/connection.js');
  const { silentLogger } = await import('../dist/kernel/logger.js');

  const tmp = mkdtempSync(join(tmpdir(), 'airlock-bench-openapi-'));
  const docs = readdirSync(DIR)
    .filter((f) => /\.(ya?ml|json)$/.test(f))
    .sort();
  const baseline = median(
    await Promise.all([0, 1, 2].map(() => runChild(['--baseline']))).then((xs) =>
      xs.map((x) => x.maxRssMB),
    ),
  );
  const compile = [];
  const catalogs = {};
  try {
    for (const doc of docs) {
      const out = join(tmp, `${doc}.catalog.json`);
      const runs = [];
      for (let i = 0; i < RUNS; i++) runs.push(await runChild([join(DIR, doc), out]));
      const text = readFileSync(out, 'utf8');
      const loads = [];
      let catalog;
      for (let i = 0; i < 7; i++) {
        const t = performance.now();
        const parsed = parseCatalog(JSON.parse(readFileSync(out, 'utf8')));
        indexCatalog(parsed.catalog);
        loads.push(performance.now() - t);
        catalog = parsed.catalog;
      }
      catalogs[doc] = catalog;
      compile.push({
        doc,
        documentKB: Math.round(statSync(join(DIR, doc)).size / 1024),
        resources: runs[0].resources,
        methods: runs[0].methods,
        compileMs: r1(median(runs.map((r) => r.ms))),
        peakRssMB: r1(median(runs.map((r) => r.maxRssMB))),
        peakOverBaselineMB: r1(median(runs.map((r) => r.maxRssMB)) - baseline),
        catalogKB: Math.round(Buffer.byteLength(text) / 1024),
        loadMs: r1(median(loads)),
      });
    }

    // _resources latency against ledger_echo, interleaved.
    const k = await airlockKernel();
    const conn = connection('bench:openapi', 'internal');
    const rows = [];
    try {
      const mounted = [];
      for (const doc of ['asana_oas.yaml', 'discord_openapi.json'].filter((d) => catalogs[d])) {
        const prefix = doc.split(/[_.]/)[0];
        k.kernel.mount(
          createOpenapiDoor({ catalog: catalogs[doc], prefix, env: {}, logger: silentLogger }),
        );
        mounted.push({ doc, prefix });
      }
      const time = async (fn) => {
        const t = process.hrtime.bigint();
        const r = await fn();
        if (r.isError) throw new Error(JSON.stringify(r).slice(0, 300));
        return Number(process.hrtime.bigint() - t) / 1000;
      };
      const echo = () =>
        k.kernel.call('ledger', 'ledger_echo', { text: 'x' }, { connection: conn });
      for (const { doc, prefix } of mounted) {
        for (const query of ['', 'task', 'project sections', 'webhook', 'no such thing']) {
          const call = () =>
            k.kernel.call(prefix, `${prefix}_resources`, query ? { query } : {}, {
              connection: conn,
            });
          for (let i = 0; i < 30; i++) await time(call); // warm-up
          const a = [];
          const b = [];
          for (let i = 0; i < QUERIES; i++) {
            a.push(await time(call));
            b.push(await time(echo));
          }
          rows.push({
            doc,
            query: query || '(none)',
            medianUs: r1(median(a)),
            p95Us: r1(p95(a)),
            echoMedianUs: r1(median(b)),
            ratio: r1(median(a) / median(b)),
          });
        }
      }
    } finally {
      await k.close();
    }
    return { baselineRssMB: r1(baseline), compile, resources: rows };
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

export function printOpenapi(results, table) {
  console.log(
    `openapi door: compile (median of ${RUNS}, fresh process each; baseline process ${results.baselineRssMB} MB peak RSS), catalog load (parse + check + index)\n`,
  );
  console.log(
    table(
      [
        'document',
        'methods',
        'doc KB',
        'compile ms',
        'peak RSS MB',
        'over base MB',
        'catalog KB',
        'load ms',
      ],
      results.compile.map((r) => [
        r.doc,
        r.methods,
        r.documentKB,
        r.compileMs,
        r.peakRssMB,
        r.peakOverBaselineMB,
        r.catalogKB,
        r.loadMs,
      ]),
    ),
  );
  console.log(
    `\n<prefix>_resources through kernel.call, ${QUERIES} per row, interleaved with ledger_echo\n`,
  );
  console.log(
    table(
      ['document', 'query', 'median µs', 'p95 µs', 'echo µs', 'ratio'],
      results.resources.map((r) => [r.doc, r.query, r.medianUs, r.p95Us, r.echoMedianUs, r.ratio]),
    ),
  );
  console.log('');
}

function plainTable(headers, rows) {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => String(r[i]).length)));
  const line = (cells) =>
    cells
      .map((c, i) => (i < 2 ? String(c).padEnd(widths[i]) : String(c).padStart(widths[i])))
      .join('  ');
  return [line(headers), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

if (process.argv[2] === '--child') {
  await child(process.argv[3], process.argv[4]);
} else if (process.argv[1] === HERE) {
  const results = await benchOpenapi();
  printOpenapi(results, plainTable);
  const out = fileURLToPath(new URL('./results/openapi.json', import.meta.url));
  writeFileSync(
    out,
    `${JSON.stringify({ date: new Date().toISOString(), node: process.version, ...results }, null, 2)}\n`,
  );
  console.log(`results in bench/results/openapi.json`);
}
