/**
 * Airlock's version, read once from package.json so the CLI, the MCP
 * server's `serverInfo` and the doors' own server descriptions all say the
 * release that is installed. `../../package.json` is the package root both
 * from `src/kernel/` (tests, sources) and from `dist/kernel/` (the build).
 */
import { readFileSync } from 'node:fs';

const manifest = JSON.parse(
  readFileSync(new URL('../../package.json', import.meta.url), 'utf8'),
) as { version: string };

/**
 * @example
 * import { AIRLOCK_VERSION } from './version.js';
 * const serverInfo = { name: 'airlock', version: AIRLOCK_VERSION };
 */
export const AIRLOCK_VERSION: string = manifest.version;
