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
  },
});
