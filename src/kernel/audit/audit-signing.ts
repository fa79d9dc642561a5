/**
 * Signatures over the audit chain (spec/kernel.md §10, issue 33). A chain
 * shows an entry edited, deleted or moved, but not the newest entries
 * removed nor the whole chain rewritten by whoever holds the store; a
 * checkpoint — the head's id and hash, signed with the deployment's Ed25519
 * key (kept in the data folder, not in the store) — pins what existed. The
 * retention anchor and signed exports are signed the same way.
 */
import { createPublicKey, sign, verify, type KeyObject } from 'node:crypto';
import { canonicalJson, sha256Hex } from '../digest.js';

/** Signs audit checkpoints; `keyId` names the key (16 hex digits of its public key's SHA-256). */
export interface AuditSigner {
  readonly keyId: string;
  /** The public key, SPKI PEM: what an auditor verifies with. */
  readonly publicKeyPem: string;
  /** Base64 Ed25519 signature of the statement's canonical JSON. */
  sign(statement: object): string;
}

export function keyIdOf(publicKey: KeyObject): string {
  return sha256Hex(publicKey.export({ type: 'spki', format: 'der' })).slice(0, 16);
}

/** A signer over an Ed25519 private key. */
export function createAuditSigner(privateKey: KeyObject): AuditSigner {
  const publicKey = createPublicKey(privateKey);
  return {
    keyId: keyIdOf(publicKey),
    publicKeyPem: publicKey.export({ type: 'spki', format: 'pem' }).toString(),
    sign: (statement) =>
      sign(null, Buffer.from(canonicalJson(statement)), privateKey).toString('base64'),
  };
}

/** True when `signature` is `publicKey`'s signature of the statement. */
export function verifyStatement(
  publicKey: KeyObject,
  statement: object,
  signature: string,
): boolean {
  // Only the canonical base64 form: a lenient decoder ignores a changed padding bit.
  if (Buffer.from(signature, 'base64').toString('base64') !== signature) return false;
  try {
    return verify(
      null,
      Buffer.from(canonicalJson(statement)),
      publicKey,
      Buffer.from(signature, 'base64'),
    );
  } catch {
    return false;
  }
}

/** Something signed: the statement's fields plus who signed it and the signature. */
export type Signed<T extends object> = T & { keyId: string; signature: string };

export function signStatement<T extends object>(signer: AuditSigner, statement: T): Signed<T> {
  return { ...statement, keyId: signer.keyId, signature: signer.sign(statement) };
}

/** The statement a `Signed` value signed (everything but the key id and signature). */
export function statementOf<T extends object>(signed: Signed<T>): T {
  const { keyId: _k, signature: _s, ...statement } = signed;
  return statement as unknown as T;
}

/** The head of the chain at a time, signed: `kind` tells statements apart. */
export interface CheckpointStatement {
  kind: 'airlock.audit.checkpoint/1';
  headId: number;
  headHash: string;
  at: number;
}

/** The anchor retention leaves when it prunes (the last pruned entry), signed. */
export interface AnchorStatement {
  kind: 'airlock.audit.anchor/1';
  id: number;
  hash: string;
  at: number;
}

/** The seal of a signed export: what the lines before it hold, and their digest. */
export interface ExportStatement {
  kind: 'airlock.audit.export/1';
  /** The hash the first exported entry follows. */
  startHash: string;
  headId: number | null;
  headHash: string;
  count: number;
  /** SHA-256 hex of the exported lines, every byte before the seal line. */
  linesDigest: string;
  at: number;
}
