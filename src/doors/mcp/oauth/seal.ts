/**
 * Upstream OAuth secrets at rest (spec/gateway.md §1 "OAuth upstreams"):
 * AES-256-GCM under a key kept in the data folder (`upstream-oauth.key`,
 * mode 0600, created on first use), each sealed value bound to its
 * upstream's name as additional data, so a value cannot be moved to
 * another upstream's row and still open.
 *
 * @example
 * const sealer = fileSealer('/var/lib/airlock');
 * const sealed = await sealer.seal('{"tokens":…}', 'gh');
 * await sealer.open(sealed, 'gh'); // '{"tokens":…}'
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { open, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';

export const KEY_FILE = 'upstream-oauth.key';
const VERSION = 'v1';
const IV_BYTES = 12;
const TAG_BYTES = 16;

export interface Sealer {
  seal(plain: string, upstream: string): Promise<string>;
  /** The plain text, or null when it does not open (another key, another upstream, tampered). */
  open(sealed: string, upstream: string): Promise<string | null>;
}

const aad = (upstream: string) => Buffer.from(`airlock upstream oauth ${upstream}`, 'utf8');

/** Reads the key, creating it (0600, exclusively) when `create` and it does not exist yet. */
async function readKey(path: string, create: boolean): Promise<Buffer | null> {
  try {
    const info = await stat(path);
    if ((info.mode & 0o077) !== 0)
      throw new Error(
        `${path} is readable by other users (mode ${(info.mode & 0o777).toString(8)}); run chmod 600 on it, then retry`,
      );
    const key = Buffer.from((await readFile(path, 'utf8')).trim(), 'base64');
    if (key.length !== 32) throw new Error(`${path} does not hold a 32-byte key (base64)`);
    return key;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    if (!create) return null;
  }
  const key = randomBytes(32);
  try {
    const file = await open(path, 'wx', 0o600);
    await file.writeFile(`${key.toString('base64')}\n`);
    await file.close();
    return key;
  } catch (error) {
    // Another instance sharing the folder wrote it first: use theirs.
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return readKey(path, false);
    throw error;
  }
}

/** A sealer whose key lives in `<dataDir>/upstream-oauth.key`. */
export function fileSealer(dataDir: string): Sealer {
  const path = join(dataDir, KEY_FILE);
  let key: Buffer | null = null;
  const keyFor = async (create: boolean) => (key ??= await readKey(path, create));
  return {
    async seal(plain, upstream) {
      const k = (await keyFor(true))!;
      const iv = randomBytes(IV_BYTES);
      const cipher = createCipheriv('aes-256-gcm', k, iv);
      cipher.setAAD(aad(upstream));
      const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
      return `${VERSION}.${Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64url')}`;
    },
    async open(sealed, upstream) {
      const k = await keyFor(false);
      if (!k || !sealed.startsWith(`${VERSION}.`)) return null;
      const raw = Buffer.from(sealed.slice(VERSION.length + 1), 'base64url');
      if (raw.length < IV_BYTES + TAG_BYTES) return null;
      try {
        const decipher = createDecipheriv('aes-256-gcm', k, raw.subarray(0, IV_BYTES));
        decipher.setAAD(aad(upstream));
        decipher.setAuthTag(raw.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
        return Buffer.concat([
          decipher.update(raw.subarray(IV_BYTES + TAG_BYTES)),
          decipher.final(),
        ]).toString('utf8');
      } catch {
        return null;
      }
    },
  };
}
