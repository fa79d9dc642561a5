import { afterEach, describe, expect, it } from 'vitest';
import {
  bridgeProof,
  isOriginAllowed,
  isReservedEvent,
  relayProof,
  tokenMatches,
} from '../../../src/doors/page/auth.js';
import type { Puente } from '../../../src/doors/page/puente.js';
import type { RelayError } from '../../../src/doors/page/relay-error.js';
import {
  authenticated,
  bridgeProofOf,
  dial,
  K,
  ORIGIN,
  relayProofOf,
  startRelay,
  TOKEN,
} from './relay-helpers.js';

const relays: Puente[] = [];
async function relay(env: Record<string, string> = {}, grace?: number) {
  const r = await startRelay(env, grace);
  relays.push(r.puente);
  return r;
}
afterEach(async () => {
  await Promise.all(relays.splice(0).map((p) => p.close()));
});

const rejection = (p: Promise<unknown>) =>
  p.then(
    () => null,
    (e: unknown) => e as RelayError,
  );

describe('auth helpers', () => {
  it('computes the v2 proofs from the exact handshake strings', () => {
    const key = K();
    expect(bridgeProof(key, 'NR', 'NB', ORIGIN)).toBe(bridgeProofOf('NR', 'NB'));
    expect(relayProof(key, 'NB', 'NR')).toBe(relayProofOf('NB', 'NR'));
    // A fixed vector, so a change in the strings fails loudly.
    expect(bridgeProof(K('0123456789abcdef'), 'nr', 'nb', 'http://localhost')).toBe(
      bridgeProofOf('nr', 'nb', 'http://localhost', '0123456789abcdef'),
    );
  });

  it('tokenMatches compares the SHA-256 of the candidate with a 32-byte digest', () => {
    expect(tokenMatches(TOKEN, K())).toBe(true);
    expect(tokenMatches(TOKEN + 'x', K())).toBe(false);
    expect(tokenMatches(42, K())).toBe(false);
  });

  it('isOriginAllowed accepts only exact loopback http(s) origins by default', () => {
    expect(isOriginAllowed('http://127.0.0.1:3000')).toBe(true);
    expect(isOriginAllowed('https://localhost')).toBe(true);
    expect(isOriginAllowed('http://[::1]:8080')).toBe(true);
    expect(isOriginAllowed('http://example.com')).toBe(false);
    expect(isOriginAllowed('http://localhost.evil.com')).toBe(false);
    expect(isOriginAllowed('file://')).toBe(false);
    expect(isOriginAllowed('null')).toBe(false);
    expect(isOriginAllowed(undefined)).toBe(false);
    expect(isOriginAllowed('https://app.example', new Set(['https://app.example']))).toBe(true);
    expect(isOriginAllowed('http://127.0.0.1:3000', new Set(['https://app.example']))).toBe(false);
  });

  it('isReservedEvent detects the wu:, system: and app: namespaces', () => {
    expect(['wu:x', 'system:boot', 'app:mounted'].map(isReservedEvent)).toEqual([true, true, true]);
    expect(['shell:navigate', 'agent:hi', 'wux'].map(isReservedEvent)).toEqual([
      false,
      false,
      false,
    ]);
  });
});

describe('upgrade and handshake', () => {
  it('answers 403 to a missing or foreign Origin', async () => {
    const { url } = await relay();
    await expect(dial(url, null)).rejects.toMatchObject({ status: 403 });
    await expect(dial(url, 'http://evil.example')).rejects.toMatchObject({ status: 403 });
    const custom = await relay({ WU_MCP_ORIGINS: 'https://app.example' });
    await expect(dial(custom.url, ORIGIN)).rejects.toMatchObject({ status: 403 });
    const ok = await dial(custom.url, 'https://app.example');
    ok.ws.close();
  });

  it('says hello with versions [2, 1] and a 32-byte base64url nonce', async () => {
    const { url } = await relay();
    const b = await dial(url);
    const hello = await b.next();
    expect(hello.type).toBe('hello');
    expect(hello.versions).toEqual([2, 1]);
    expect(Buffer.from(hello.nonce as string, 'base64url')).toHaveLength(32);
    expect(hello.nonce).toMatch(/^[A-Za-z0-9_-]{43}$/);
    b.ws.close();
  });

  it('authenticates a v2 bridge and proves the token back', async () => {
    const { url, puente } = await relay();
    const { ok, nb, nr, b } = await authenticated(url);
    expect(ok).toEqual({ type: 'auth_ok', version: 2, proof: relayProofOf(nb, nr) });
    expect(puente.conectado()).toBe(true);
    b.ws.close();
  });

  it('refuses a wrong proof with WU_MCP_AUTH_FAILED and closes', async () => {
    const { url, puente } = await relay();
    const b = await dial(url);
    const hello = await b.next();
    b.send({
      type: 'auth',
      version: 2,
      nonce: 'n'.repeat(43),
      proof: bridgeProofOf(hello.nonce as string, 'n'.repeat(43), ORIGIN, 'wrong-token-0123456789'),
    });
    expect(await b.next()).toEqual({ type: 'auth_error', code: 'WU_MCP_AUTH_FAILED' });
    await b.closed;
    expect(puente.conectado()).toBe(false);
  });

  it('binds the proof to the Origin of the upgrade', async () => {
    const { url } = await relay();
    const b = await dial(url);
    const hello = await b.next();
    b.send({
      type: 'auth',
      version: 2,
      nonce: 'o'.repeat(43),
      proof: bridgeProofOf(hello.nonce as string, 'o'.repeat(43), 'http://localhost:1'),
    });
    expect(await b.next()).toMatchObject({ code: 'WU_MCP_AUTH_FAILED' });
  });

  it('refuses a replayed bridge nonce and a replayed proof', async () => {
    const { url } = await relay();
    const first = await authenticated(url, 'replayed-nonce-0000000000');
    first.b.ws.close();
    await first.b.closed;
    // Same nonce, valid proof for the new relay nonce.
    const again = await authenticated(url, 'replayed-nonce-0000000000');
    expect(again.ok).toEqual({ type: 'auth_error', code: 'WU_MCP_AUTH_FAILED' });
    // The old frame verbatim (old relay nonce).
    const c = await dial(url);
    await c.next();
    c.send({
      type: 'auth',
      version: 2,
      nonce: 'fresh-nonce-000000000000',
      proof: bridgeProofOf(first.nr, 'fresh-nonce-000000000000'),
    });
    expect(await c.next()).toEqual({ type: 'auth_error', code: 'WU_MCP_AUTH_FAILED' });
  });

  it('closes a silent socket after authTimeout with WU_MCP_AUTH_TIMEOUT', async () => {
    const { url, puente } = await relay({ WU_MCP_AUTH_TIMEOUT: '100' });
    const b = await dial(url);
    await b.next();
    const started = Date.now();
    expect(await b.next()).toEqual({ type: 'auth_error', code: 'WU_MCP_AUTH_TIMEOUT' });
    expect(Date.now() - started).toBeGreaterThanOrEqual(80);
    await b.closed;
    expect(puente.conectado()).toBe(false);
  });

  it('refuses a second bridge with WU_MCP_BRIDGE_ACTIVE and keeps the first', async () => {
    const { url, puente } = await relay();
    const first = await authenticated(url);
    const second = await authenticated(url);
    expect(second.ok).toEqual({ type: 'auth_error', code: 'WU_MCP_BRIDGE_ACTIVE' });
    await second.b.closed;
    expect(puente.conectado()).toBe(true);
    const answer = puente.enviar('status');
    const req = await first.b.next();
    first.b.send({ type: 'response', id: req.id, result: { ok: 1 } });
    expect(await answer).toEqual({ ok: 1 });
  });

  it('authenticates an old v1 bridge by token digest, and refuses a wrong token', async () => {
    const { url, puente } = await relay();
    const bad = await dial(url);
    await bad.next();
    bad.send({ type: 'auth', token: 'not-the-token-0000000' });
    expect(await bad.next()).toEqual({
      type: 'auth_result',
      success: false,
      reason: 'WU_MCP_AUTH_FAILED',
    });
    await bad.closed;
    const good = await dial(url);
    await good.next();
    good.send({ type: 'auth', token: TOKEN });
    expect(await good.next()).toEqual({ type: 'auth_result', success: true });
    expect(puente.conectado()).toBe(true);
    good.ws.close();
  });

  it('accepts insecure mode only when the relay runs with WU_MCP_INSECURE=1 and no token', async () => {
    const secure = await relay();
    const refused = await dial(secure.url);
    await refused.next();
    refused.send({ type: 'auth', version: 2, insecure: true });
    expect(await refused.next()).toEqual({ type: 'auth_error', code: 'WU_MCP_AUTH_FAILED' });

    const { loadConfig } = await import('../../../src/doors/page/config.js');
    const { Puente } = await import('../../../src/doors/page/puente.js');
    const p = new Puente(Object.freeze({ ...loadConfig({ WU_MCP_INSECURE: '1' }), port: 0 }), {
      logger: { error: () => undefined },
    });
    relays.push(await p.ready());
    const b = await dial(`ws://127.0.0.1:${p.address()!.port}`);
    await b.next();
    b.send({ type: 'auth', version: 2, insecure: true });
    expect(await b.next()).toEqual({ type: 'auth_ok', version: 2, insecure: true });
    expect(p.conectado()).toBe(true);
    b.ws.close();
  });

  it('closes a socket that sends a frame over maxPayload (1009) without authenticating it', async () => {
    const { url, puente } = await relay({ WU_MCP_MAX_PAYLOAD: '1024' });
    const b = await dial(url);
    await b.next();
    b.send({ type: 'auth', version: 2, nonce: 'x'.repeat(2000), proof: 'y' });
    expect(await b.closed).toBe(1009);
    expect(puente.conectado()).toBe(false);
  });
});

describe('requests', () => {
  it('answers WU_MCP_NOT_CONNECTED without a bridge', async () => {
    const { puente } = await relay();
    expect(await rejection(puente.enviar('status'))).toMatchObject({
      code: 'WU_MCP_NOT_CONNECTED',
    });
  });

  it('forwards a request and resolves with the response; a bridge error rejects with its code', async () => {
    const { url, puente } = await relay();
    const { b } = await authenticated(url);
    const p = puente.enviar('get_state', { path: 'a' });
    const req = await b.next();
    expect(req).toMatchObject({ type: 'request', command: 'get_state', params: { path: 'a' } });
    expect(puente.pending()).toBe(1);
    b.send({ type: 'response', id: req.id, result: { path: 'a', value: 1 } });
    expect(await p).toEqual({ path: 'a', value: 1 });
    const q = puente.enviar('click', {});
    const req2 = await b.next();
    b.send({
      type: 'response',
      id: req2.id,
      error: { code: 'WU_PERMISSION_DENIED', message: 'no' },
    });
    expect(await rejection(q)).toMatchObject({ code: 'WU_PERMISSION_DENIED', fromBridge: true });
    expect(puente.pending()).toBe(0);
  });

  it('times a request out, tells the page to cancel, and forgets it', async () => {
    const { url, puente } = await relay({ WU_MCP_TIMEOUT: '100' });
    const { b } = await authenticated(url);
    const p = puente.enviar('status');
    const req = await b.next();
    expect(await rejection(p)).toMatchObject({ code: 'WU_MCP_TIMEOUT' });
    expect(await b.next()).toEqual({ type: 'cancel', id: req.id });
    expect(puente.pending()).toBe(0);
    // A late answer is ignored.
    b.send({ type: 'response', id: req.id, result: 1 });
  });

  it('sends a cancel frame when the caller aborts', async () => {
    const { url, puente } = await relay();
    const { b } = await authenticated(url);
    const controller = new AbortController();
    const p = puente.enviar('execute_action', { action: 'slow' }, { signal: controller.signal });
    const req = await b.next();
    controller.abort();
    expect(await rejection(p)).toMatchObject({ code: 'WU_MCP_CANCELLED' });
    expect(await b.next()).toEqual({ type: 'cancel', id: req.id });
    expect(puente.pending()).toBe(0);
  });

  it('rejects pending requests when the bridge disconnects', async () => {
    const { url, puente } = await relay();
    const { b } = await authenticated(url);
    const p = puente.enviar('status');
    await b.next();
    b.ws.close();
    expect(await rejection(p)).toMatchObject({ code: 'WU_MCP_DISCONNECTED' });
    expect(puente.pending()).toBe(0);
    expect(puente.conectado()).toBe(false);
  });

  it('close() rejects pending work and force-closes a socket that does not close', async () => {
    const { url, puente } = await relay({}, 200);
    const { b } = await authenticated(url);
    const p = rejection(puente.enviar('status'));
    await b.next();
    // The peer stops reading, so it never answers the close frame.
    (b.ws as unknown as { _socket: { pause(): void } })._socket.pause();
    const started = Date.now();
    await puente.close();
    expect(Date.now() - started).toBeLessThan(2000);
    expect(await p).toMatchObject({ code: 'WU_MCP_CLOSED' });
    expect(puente.pending()).toBe(0);
    expect(puente.address()).toBeNull();
    relays.splice(relays.indexOf(puente), 1);
  });
});
