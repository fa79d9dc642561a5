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
    // Two files at a time (vitest's default on a 2-core machine is one): many
    // files wait on the servers, browsers and clients they spawn rather than
    // compute. VITEST_MAX_WORKERS=N runs N.
    maxWorkers: Number(process.env.VITEST_MAX_WORKERS) || 2,
  },
});
