/** Asana (OpenAPI 3.0, ≈3 MB) against prism: see prism-suite.ts. */
import { prismSuite } from './prism-suite.js';

prismSuite({
  doc: 'asana_oas.yaml',
  prefix: 'asana',
  env: { ASANA_PERSONAL_ACCESS_TOKEN: 'asana-test-token' },
});
