/**
 * The official suite's authorization-server scenarios (conformance
 * 0.2.0-alpha.12 `authorization`: metadata endpoint, authorization code
 * grant with PKCE) against Airlock's own authorization server
 * (spec/authority.md §7). The suite plays a public client: its client ID is
 * a metadata document this script serves on loopback (Airlock fetches
 * `http://localhost…` documents on loopback deployments), naming the suite's
 * callback as redirect URI. Where the suite asks a person to open the
 * authorization URL, this script is the owner's browser: it follows the
 * redirects with a cookie jar to Airlock's consent page, approves there
 * with the owner's token (the page's own route), and follows on to the
 * suite's callback.
 */
import { spawn } from 'node:child_process';
import { createServer } from 'node:http';
import { existsSync, mkdirSync, openSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

const listen = (server) =>
  new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server.address().port)));

async function freePort() {
  const server = createServer();
  const port = await listen(server);
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** A browser with cookies, following redirects by hand until `stop(url)`. */
async function follow(start, stop, jar) {
  let current = new URL(start);
  for (let hops = 0; hops < 12; hops++) {
    if (stop(current)) return current;
    const res = await fetch(current, {
      redirect: 'manual',
      headers: { cookie: [...jar].map(([k, v]) => `${k}=${v}`).join('; ') },
    });
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const eq = pair.indexOf('=');
      jar.set(pair.slice(0, eq), pair.slice(eq + 1));
    }
    const location = res.headers.get('location');
    if (!location) throw new Error(`${current.pathname} answered ${res.status} without a redirect`);
    current = new URL(location, current);
  }
  throw new Error('too many redirects');
}

/** The owner consents to the suite's authorization request, as the consent page would. */
async function consent(authorizationUrl, issuer, ownerToken, callbackPort) {
  const jar = new Map();
  const page = await follow(authorizationUrl, (u) => u.pathname.startsWith('/oauth/consent/'), jar);
  const id = page.pathname.slice('/oauth/consent/'.length);
  const decided = await fetch(`${issuer}/api/v1/oauth/requests/${id}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ownerToken}`, 'content-type': 'application/json' },
    body: JSON.stringify({ decision: 'approve', agent: 'conformance-authz' }),
  });
  if (decided.status !== 200) throw new Error(`consent: ${decided.status} ${await decided.text()}`);
  const { redirectTo } = await decided.json();
  const back = await follow(
    new URL(redirectTo, issuer).href,
    (u) => u.host === `127.0.0.1:${callbackPort}`,
    jar,
  );
  await fetch(back);
}

/** Scenario → checks, from every checks.json under `dir`. */
export function readAuthzResults(dir) {
  const scenarios = new Map();
  const walk = (d) => {
    if (!existsSync(d)) return;
    for (const name of readdirSync(d)) {
      const full = join(d, name);
      if (statSync(full).isDirectory()) walk(full);
      else if (name === 'checks.json') {
        const scenario = /^(?:authorization-server-)?(.+?)-\d{4}-\d{2}-\d{2}T[\d-]+Z$/.exec(
          d.split('/').pop(),
        )?.[1];
        if (scenario) scenarios.set(scenario, JSON.parse(readFileSync(full, 'utf8')));
      }
    }
  };
  walk(dir);
  return scenarios;
}

/**
 * Runs the suite's authorization scenarios against `issuer` (an `airlock
 * serve` on loopback); resolves with the suite's exit code. Output in `out`.
 */
export async function runAuthorizationSuite({ node22, cli, issuer, ownerToken, out, cleanups }) {
  mkdirSync(out, { recursive: true });
  const callbackPort = await freePort();
  const documents = createServer((req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(documents.doc));
  });
  const docPort = await listen(documents);
  cleanups.push(async () => new Promise((resolve) => documents.close(resolve)));
  const clientId = `http://localhost:${docPort}/client.json`;
  documents.doc = {
    client_id: clientId,
    client_name: 'MCP conformance suite',
    redirect_uris: [`http://127.0.0.1:${callbackPort}/callback`],
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    token_endpoint_auth_method: 'none',
  };
  const log = openSync(join(out, 'suite.log'), 'w');
  const child = spawn(
    node22,
    [
      cli,
      'authorization',
      '--url',
      issuer,
      '--client-id',
      clientId,
      '--resource',
      `${issuer}/mcp`,
      '-p',
      String(callbackPort),
      '-o',
      out,
    ],
    { stdio: ['ignore', 'pipe', log] },
  );
  let printed = '';
  let consenting = null;
  child.stdout.on('data', (chunk) => {
    printed += chunk;
    const url = /complete the authentication process\.\s*\n(\S+)/.exec(printed)?.[1];
    if (url && !consenting)
      consenting = consent(url, issuer, ownerToken, callbackPort).catch((error) => {
        printed += `\n[driver] consent failed: ${error.message}\n`;
      });
  });
  const code = await new Promise((resolve) => child.once('exit', resolve));
  await consenting;
  const { writeFileSync } = await import('node:fs');
  writeFileSync(join(out, 'suite.stdout.log'), printed);
  return code ?? 1;
}
