import { defineConfig } from 'vitest/config';
import base from './vitest.config.js';

/**
 * `npm run test:fast`: the lane to run while working — the kernel, the lint
 * rules, the store contract on SQLite and the doors' unit tests. No browser,
 * no cluster, no PostgreSQL or Redis (their suites skip even when the
 * services answer: AIRLOCK_TEST_SERVICES=none), no child servers.
 * The full `npm test` stays the CI command.
 */
export default defineConfig({
  test: {
    ...base.test,
    include: [
      'test/kernel/**/*.test.ts',
      'test/lint/**/*.test.ts',
      'test/store/**/*.test.ts',
      'test/policy/scene-policy.test.ts',
      'test/policy/policy-http.test.ts',
      'test/doors/*/validation.test.ts',
      'test/doors/*/units.test.ts',
      'test/doors/scene/reducer.test.ts',
      'test/doors/scene/image-header.test.ts',
      'test/doors/scene/zip-reader.test.ts',
      'test/doors/notes/envelope.test.ts',
      'test/doors/openapi/catalog.test.ts',
      'test/doors/page/bridge-units.test.ts',
      'test/web/{policy-text,sse-parser,coalesce}.test.ts',
    ],
    env: { AIRLOCK_TEST_SERVICES: 'none' },
    // This lane computes rather than waits: one file per core.
    maxWorkers: 2,
  },
});
