#!/usr/bin/env node
// Runs the vitest suite and ends with one plain summary line
// ("Tests: N passed, N failed, N skipped") that CI logs can be judged by.
// Exits with vitest's own exit code.
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const report = `${root}.tmp/vitest-report.json`;
mkdirSync(`${root}.tmp`, { recursive: true });
rmSync(report, { force: true });

const vitest = `${root}node_modules/vitest/vitest.mjs`;
const result = spawnSync(
  process.execPath,
  [
    vitest,
    'run',
    '--reporter=default',
    '--reporter=json',
    `--outputFile=${report}`,
    ...process.argv.slice(2),
  ],
  { cwd: root, stdio: 'inherit' },
);

let summary = 'Tests: 0 passed, 0 failed (no report was written)';
try {
  const r = JSON.parse(readFileSync(report, 'utf8'));
  summary = `Tests: ${r.numPassedTests} passed, ${r.numFailedTests} failed, ${r.numPendingTests + r.numTodoTests} skipped`;
} catch {
  // vitest crashed before reporting; its exit code says so.
}
process.stdout.write(`\n${summary}\n`);
process.exit(result.status ?? 1);
