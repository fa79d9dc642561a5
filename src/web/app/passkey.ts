/**
 * The owner's passkeys in the browser (issue 25), with
 * `@simplewebauthn/browser` served by this server (`/ui/vendor/simplewebauthn/`,
 * no CDN): enrolling one, signing in with one, and the assertion a decision
 * needs — its challenge comes from `POST /api/v1/presence/challenge` for the
 * exact request about to be sent, so the passkey approves that decision and
 * no other.
 */
import type * as WebAuthn from '@simplewebauthn/browser';
import { ApiError, json } from './api.js';

let lib: Promise<typeof WebAuthn> | null = null;
const webauthn = () => {
  const url = '/ui/vendor/simplewebauthn/index.js';
  lib ??= import(url) as Promise<typeof WebAuthn>;
  return lib;
};

type Options<T extends 'create' | 'get'> = T extends 'create'
  ? WebAuthn.PublicKeyCredentialCreationOptionsJSON
  : WebAuthn.PublicKeyCredentialRequestOptionsJSON;

/** Base64url of the JSON of an assertion: the `x-airlock-presence` header's value. */
function headerValue(assertion: unknown): string {
  const bytes = new TextEncoder().encode(JSON.stringify(assertion));
  let text = '';
  for (const b of bytes) text += String.fromCharCode(b);
  return btoa(text).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

/** Says what went wrong with the authenticator in words (a cancelled prompt, no passkey here). */
function explained(e: unknown): Error {
  if (e instanceof ApiError) return e;
  const name = e instanceof Error ? e.name : '';
  if (name === 'NotAllowedError')
    return new Error(
      'The passkey prompt was cancelled or timed out; try again and use your passkey.',
    );
  return e instanceof Error ? e : new Error(String(e));
}

/** The proof header for one decision: `method path body` exactly as it will be sent. */
export async function presenceFor(
  method: string,
  path: string,
  body: unknown,
): Promise<Record<string, string>> {
  const options = await json<Options<'get'>>('POST', 'presence/challenge', {
    body: { method, path, ...(body === undefined ? {} : { body }) },
  });
  try {
    const { startAuthentication } = await webauthn();
    const assertion = await startAuthentication({ optionsJSON: options });
    return { 'x-airlock-presence': headerValue(assertion) };
  } catch (e) {
    throw explained(e);
  }
}

/** Enrols a passkey named `name` on this device. */
export async function enrolPasskey(name: string): Promise<void> {
  const options = await json<Options<'create'>>('POST', 'passkeys/options', { body: { name } });
  let response: unknown;
  try {
    const { startRegistration } = await webauthn();
    response = await startRegistration({ optionsJSON: options });
  } catch (e) {
    throw explained(e);
  }
  await json('POST', 'passkeys', { body: { name, response } });
}

/** Signs in with a passkey; the session answer as the session route gives it. */
export async function passkeyAssertionForSignIn(): Promise<unknown> {
  const options = await json<Options<'get'>>('POST', 'session/passkey-options', {
    signingIn: true,
  });
  try {
    const { startAuthentication } = await webauthn();
    return await startAuthentication({ optionsJSON: options });
  } catch (e) {
    throw explained(e);
  }
}
