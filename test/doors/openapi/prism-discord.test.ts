/** Discord (OpenAPI 3.1, ≈1.2 MB) against prism: see prism-suite.ts. */
import { prismSuite } from './prism-suite.js';

prismSuite({
  doc: 'discord_openapi.json',
  prefix: 'discord',
  env: { DISCORD_BOT_TOKEN: 'Bot discord-test-token', DISCORD_TOKEN: 'discord-oauth-token' },
});
