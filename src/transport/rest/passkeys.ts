/**
 * The owner's passkeys (WebAuthn, issue 25) with `@simplewebauthn/server`:
 * enrolment, sign-in, and the proof of presence each owner decision needs.
 * Passkeys and challenges are generic store records, so every instance on
 * one store — and `airlock stdio` / `airlock mcp` on the same folder — knows
 * the same passkeys.
 *
 * A decision's challenge is 16 random bytes followed by the SHA-256 of the
 * decision (kernel/authority/presence.ts), so the assertion the authenticator signs
 * names that decision and no other; the challenge is kept until its first
 * use (or 5 minutes) and deleted in the transaction that accepts it, so an
 * assertion is never accepted twice. User verification is required.
 *
 * The relying party is the UI's origin: `http://localhost:<port>` on a
 * loopback bind (an IP literal cannot be an RP ID), or `--public-url`.
 */
import { randomBytes } from 'node:crypto';
import type * as SimpleWebAuthn from '@simplewebauthn/server';
import type { AuthenticationResponseJSON, RegistrationResponseJSON } from '@simplewebauthn/server';
import { failure, type Failure } from '../../kernel/errors.js';
import { PASSKEYS, type PresenceVerifier } from '../../kernel/authority/presence.js';
import type { Store } from '../../kernel/store.js';

/** @simplewebauthn/server, loaded with the first ceremony (not at start-up). */
let library: Promise<typeof SimpleWebAuthn> | undefined;
const webauthn = () => (library ??= import('@simplewebauthn/server'));

const CHALLENGES = 'owner-passkey-challenges';
const CHALLENGE_TTL_MS = 5 * 60 * 1000;

type Purpose = 'enrol' | 'signIn' | 'decision';

interface ChallengeRecord {
  purpose: Purpose;
  /** For a decision: the digest it is bound to. */
  digest: string | null;
  expiresAt: number;
}

export interface PasskeyRecord {
  id: string;
  name: string;
  publicKey: string;
  counter: number;
  transports: string[];
  createdAt: number;
  lastUsedAt: number | null;
}

/** A passkey as listed: never its key. */
export interface PasskeyInfo {
  id: string;
  name: string;
  createdAt: number;
  lastUsedAt: number | null;
}

export interface RelyingParty {
  /** e.g. `localhost` or `airlock.example.com`. */
  id: string;
  /** e.g. `http://localhost:7300`. */
  origin: string;
}

export interface Passkeys extends PresenceVerifier {
  /** Set once the server knows its address (the port may be chosen at listen time). */
  setRelyingParty(rp: RelyingParty): void;
  relyingParty(): RelyingParty | null;
  list(): Promise<PasskeyInfo[]>;
  enrolOptions(name: string): Promise<Record<string, unknown> | Failure>;
  enrol(name: string, response: unknown): Promise<PasskeyInfo | Failure>;
  remove(id: string): Promise<boolean>;
  /** Options for an assertion: to sign in (no digest) or for one decision. */
  assertionOptions(digest: string | null): Promise<Record<string, unknown> | Failure>;
  /** Verifies a sign-in assertion (single use). */
  signIn(response: unknown): Promise<true | Failure>;
}

const refused = (why: string) =>
  failure(
    'notAuthorized',
    `The passkey check failed: ${why}. Use your passkey again from the Airlock page (open the inbox and approve there).`,
    { presence: 'passkey' },
  );

const info = (r: PasskeyRecord): PasskeyInfo => ({
  id: r.id,
  name: r.name,
  createdAt: r.createdAt,
  lastUsedAt: r.lastUsedAt,
});

/** The challenge a client's assertion or attestation answers, read from its clientDataJSON. */
function challengeOf(response: unknown): string | null {
  try {
    const data = (response as { response?: { clientDataJSON?: unknown } }).response?.clientDataJSON;
    if (typeof data !== 'string') return null;
    const parsed = JSON.parse(Buffer.from(data, 'base64url').toString('utf8')) as {
      challenge?: unknown;
    };
    return typeof parsed.challenge === 'string' ? parsed.challenge : null;
  } catch {
    return null;
  }
}

export interface PasskeysOptions {
  store: Store;
  /** Called after a passkey was enrolled (the CLI removes the plain owner token file). */
  onEnrolled?: () => void;
  now?: () => number;
}

/** What the passkeys' parts share: the store, the clock and the relying party once set. */
interface PasskeyContext {
  store: Store;
  now: () => number;
  rp: RelyingParty | null;
}

function needRelyingParty({ rp }: PasskeyContext): RelyingParty | Failure {
  return rp ?? refused('this process does not serve the Airlock page, so it cannot check passkeys');
}

/** A fresh single-use challenge for `purpose`, kept in the store; a decision's carries its digest. */
async function issueChallenge(
  { store, now }: PasskeyContext,
  purpose: Purpose,
  digest: string | null,
): Promise<Uint8Array<ArrayBuffer>> {
  const bytes = Buffer.concat([
    randomBytes(16),
    digest ? Buffer.from(digest, 'hex') : randomBytes(16),
  ]);
  const challenge = bytes.toString('base64url');
  const record: ChallengeRecord = { purpose, digest, expiresAt: now() + CHALLENGE_TTL_MS };
  await store.transaction((tx) => tx.records.put(CHALLENGES, challenge, record));
  return new Uint8Array(bytes);
}

/** Takes the challenge out of the store (single use); the record, or null when unknown or expired. */
function consumeChallenge(
  { store, now }: PasskeyContext,
  challenge: string,
): Promise<ChallengeRecord | null> {
  return store.transaction(async (tx) => {
    const found = await tx.records.get<ChallengeRecord>(CHALLENGES, challenge);
    if (!found) return null;
    await tx.records.delete(CHALLENGES, challenge);
    return found.value.expiresAt > now() ? found.value : null;
  });
}

/** Verifies an assertion whose challenge was issued for `purpose` (and `digest`). */
async function assertFor(
  ctx: PasskeyContext,
  response: unknown,
  purpose: Purpose,
  digest: string | null,
): Promise<true | Failure> {
  const { store, now } = ctx;
  const party = needRelyingParty(ctx);
  if ('ok' in party) return party;
  const challenge = challengeOf(response);
  if (!challenge) return refused('the answer is not a WebAuthn assertion');
  const record = await consumeChallenge(ctx, challenge);
  if (!record) return refused('this assertion was used already or its challenge expired');
  if (record.purpose !== purpose || record.digest !== digest)
    return refused('this assertion was made for another decision');
  const id = (response as { id?: unknown }).id;
  const key =
    typeof id === 'string'
      ? await store.read((tx) => tx.records.get<PasskeyRecord>(PASSKEYS, id))
      : null;
  if (!key) return refused('this passkey is not one of the owner’s (Settings lists them)');
  let verified;
  try {
    verified = await (await webauthn()).verifyAuthenticationResponse({
      response: response as AuthenticationResponseJSON,
      expectedChallenge: challenge,
      expectedOrigin: party.origin,
      expectedRPID: party.id,
      credential: {
        id: key.value.id,
        publicKey: new Uint8Array(Buffer.from(key.value.publicKey, 'base64url')),
        counter: key.value.counter,
      },
      requireUserVerification: true,
    });
  } catch (error) {
    return refused((error as Error).message);
  }
  if (!verified.verified) return refused('the signature does not verify');
  await store.transaction((tx) =>
    tx.records.put(PASSKEYS, key.value.id, {
      ...key.value,
      counter: verified.authenticationInfo.newCounter,
      lastUsedAt: now(),
    }),
  );
  return true;
}

export function createPasskeys({ store, onEnrolled, now = Date.now }: PasskeysOptions): Passkeys {
  const ctx: PasskeyContext = { store, now, rp: null };
  const needRp = () => needRelyingParty(ctx);
  const issue = (purpose: Purpose, digest: string | null) => issueChallenge(ctx, purpose, digest);
  const consume = (challenge: string) => consumeChallenge(ctx, challenge);
  const all = () => store.read((tx) => tx.records.list<PasskeyRecord>(PASSKEYS));
  const assert = (response: unknown, purpose: Purpose, digest: string | null) =>
    assertFor(ctx, response, purpose, digest);

  return {
    setRelyingParty(value) {
      ctx.rp = value;
    },
    relyingParty: () => ctx.rp,

    async list() {
      return (await all()).map((r) => info(r.value));
    },

    async enrolOptions(name) {
      const party = needRp();
      if ('ok' in party) return party;
      const existing = await all();
      const options = await (await webauthn()).generateRegistrationOptions({
        rpName: 'Airlock',
        rpID: party.id,
        userName: 'owner',
        userDisplayName: `Airlock owner (${name})`,
        userID: new Uint8Array(Buffer.from('airlock-owner')),
        challenge: await issue('enrol', null),
        attestationType: 'none',
        excludeCredentials: existing.map((r) => ({ id: r.value.id })),
        authenticatorSelection: { residentKey: 'required', userVerification: 'required' },
      });
      return options as unknown as Record<string, unknown>;
    },

    async enrol(name, response) {
      const party = needRp();
      if ('ok' in party) return party;
      const challenge = challengeOf(response);
      const record = challenge ? await consume(challenge) : null;
      if (!challenge || !record || record.purpose !== 'enrol')
        return refused('the enrolment was started too long ago or already finished; start again');
      let verified;
      try {
        verified = await (await webauthn()).verifyRegistrationResponse({
          response: response as RegistrationResponseJSON,
          expectedChallenge: challenge,
          expectedOrigin: party.origin,
          expectedRPID: party.id,
          requireUserVerification: true,
        });
      } catch (error) {
        return refused((error as Error).message);
      }
      if (!verified.verified) return refused('the authenticator’s answer does not verify');
      const { credential } = verified.registrationInfo;
      const passkey: PasskeyRecord = {
        id: credential.id,
        name,
        publicKey: Buffer.from(credential.publicKey).toString('base64url'),
        counter: credential.counter,
        transports: credential.transports ?? [],
        createdAt: now(),
        lastUsedAt: null,
      };
      await store.transaction((tx) => tx.records.put(PASSKEYS, passkey.id, passkey));
      onEnrolled?.();
      return info(passkey);
    },

    remove: (id) => store.transaction((tx) => tx.records.delete(PASSKEYS, id)),

    async assertionOptions(digest) {
      const party = needRp();
      if ('ok' in party) return party;
      const keys = await all();
      if (keys.length === 0)
        return failure(
          'notFound',
          'No passkey is enrolled yet; sign in with the printed link or the owner token and add one in Settings.',
        );
      const options = await (await webauthn()).generateAuthenticationOptions({
        rpID: party.id,
        challenge: await issue(digest ? 'decision' : 'signIn', digest),
        userVerification: 'required',
        allowCredentials: keys.map((r) => ({ id: r.value.id })),
      });
      return options as unknown as Record<string, unknown>;
    },

    signIn: (response) => assert(response, 'signIn', null),

    async verify(digest, proof) {
      let response: unknown;
      try {
        response = JSON.parse(Buffer.from(proof, 'base64url').toString('utf8'));
      } catch {
        return refused('the presence header is not base64url JSON of a WebAuthn assertion');
      }
      return assert(response, 'decision', digest);
    },
  };
}
