import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // PostgreSQL-backed suites share one database; files run in parallel but
    // each suite uses its own schema.
    fileParallelism: true,
    // Most files spend their time waiting on what they spawned (built servers,
    // headless Chromium, the nginx cluster, Node-22 clients, SIGKILL restarts)
    // rather than computing. vitest's default on a 2-core machine is ONE
    // worker (cores - 1), which ran the suite file after file and left a core
    // idle. Two workers, one per core: with three, spawn-heavy files timed out
    // on a loaded machine (session 12). Override with VITEST_MAX_WORKERS=N.
    maxWorkers: 2,
  },
});
