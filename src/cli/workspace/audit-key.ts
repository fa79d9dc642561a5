/**
 * The deployment's audit signing key (issue 33): an Ed25519 private key in
 * the data folder (`audit-signing.key`, PKCS#8 PEM, 0600), made on first
 * use. It signs the audit chain's checkpoints, anchor and exports; it is not
 * in the store, so whoever can edit the store cannot re-sign. In scale-out,
 * give every instance the same file so one public key verifies them all.
 */
import {
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  type KeyObject,
} from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createAuditSigner, type AuditSigner } from '../../kernel/audit/audit-signing.js';

export const AUDIT_KEY_FILE = 'audit-signing.key';

/** The folder's signer, making the key when the folder has none. */
export function loadAuditSigner(data: string): AuditSigner {
  const path = join(data, AUDIT_KEY_FILE);
  if (!existsSync(path)) {
    mkdirSync(data, { recursive: true, mode: 0o700 });
    const { privateKey } = generateKeyPairSync('ed25519');
    try {
      // 'wx': two processes starting at once keep the first key.
      writeFileSync(path, privateKey.export({ type: 'pkcs8', format: 'pem' }), {
        mode: 0o600,
        flag: 'wx',
      });
      chmodSync(path, 0o600);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
  }
  return createAuditSigner(createPrivateKey(readFileSync(path)));
}

/** The folder's public key, when it has a signing key (nothing is made). */
export function folderPublicKey(data: string): KeyObject | null {
  const path = join(data, AUDIT_KEY_FILE);
  return existsSync(path) ? createPublicKey(createPrivateKey(readFileSync(path))) : null;
}

/** A public key from a file: SPKI PEM (what `airlock audit public-key` prints). */
export function readPublicKey(path: string): KeyObject {
  const key = createPublicKey(readFileSync(path));
  if (key.asymmetricKeyType !== 'ed25519')
    throw new Error(
      `${path} holds a ${key.asymmetricKeyType} key; give the Ed25519 public key 'airlock audit public-key' printed`,
    );
  return key;
}
