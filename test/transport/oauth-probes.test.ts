/**
 * Until OAuth lands (issue 36 item 7): a client that tries OAuth on a 401 —
 * mcp-remote and the Inspector use the v1 SDK's `auth()` — is told, in
 * words it shows its user, to use an agent token, instead of "Dynamic
 * Client Registration rejected (HTTP 404)".
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auth, type OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import { createHttpApp, type HttpApp } from '../../src/transport/http/http-app.js';
import { silentLogger } from '../../src/kernel/logger.js';
import { testKernel, type TestKernel } from '../helpers/kernel.js';

let tk: TestKernel;
let app: HttpApp;
let base: string;

beforeAll(async () => {
  tk = await testKernel([]);
  app = createHttpApp({ kernel: tk.kernel, logger: silentLogger });
  const addr = await app.listen(0, '127.0.0.1');
  base = `http://127.0.0.1:${addr.port}`;
});
afterAll(async () => {
  await app?.close();
  await tk?.close();
});

const HINT = /airlock agents add NAME/;

describe('an MCP client that tries OAuth', () => {
  it('gets a 401 whose WWW-Authenticate carries the token hint', async () => {
    const res = await fetch(`${base}/mcp`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(res.status).toBe(401);
    const challenge = res.headers.get('www-authenticate') ?? '';
    expect(challenge).toMatch(/^Bearer realm="airlock", error_description="[^"\\]*"$/);
    expect(challenge).toMatch(HINT);
  });

  for (const path of [
    '/.well-known/oauth-protected-resource',
    '/.well-known/oauth-protected-resource/mcp',
    '/.well-known/oauth-authorization-server',
    '/.well-known/openid-configuration',
    '/register',
  ]) {
    it(`${path} answers 404 with the token hint`, async () => {
      const res = await fetch(`${base}${path}`, { method: path === '/register' ? 'POST' : 'GET' });
      expect(res.status).toBe(404);
      const body = (await res.json()) as Record<string, string>;
      expect(body.code).toBe('notFound');
      expect(body.message).toMatch(HINT);
      expect(body.error_description).toMatch(HINT);
    });
  }

  it("the v1 SDK's auth() fails with the hint, not a bare 404", async () => {
    const provider: OAuthClientProvider = {
      redirectUrl: 'http://127.0.0.1:1/callback',
      clientMetadata: { redirect_uris: ['http://127.0.0.1:1/callback'], client_name: 'probe' },
      clientInformation: () => undefined,
      saveClientInformation: () => undefined,
      tokens: () => undefined,
      saveTokens: () => undefined,
      redirectToAuthorization: () => undefined,
      saveCodeVerifier: () => undefined,
      codeVerifier: () => '',
    };
    const error = await auth(provider, { serverUrl: `${base}/mcp` }).then(
      () => null,
      (e: Error) => e,
    );
    expect(error?.message).toMatch(HINT);
  });
});
