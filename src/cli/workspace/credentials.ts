/**
 * The owner's and the default agent's credentials in the data folder
 * (authority.md §1): `owner.token` (created at first start) and
 * `default-agent.token` (the token of the agent `default`, so start-up can
 * print a client configuration that works). Both files are 0600; the store
 * keeps only hashes, so every instance on one store knows the principals.
 */
import { chmodSync, existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { newToken, type Principals } from '../../kernel/authority/principals.js';
import type { Logger } from '../../kernel/logger.js';

export const OWNER_TOKEN_FILE = 'owner.token';
export const DEFAULT_AGENT_FILE = 'default-agent.token';
export const DEFAULT_AGENT = 'default';

export interface Credentials {
  /** The owner token, when this data folder holds the store's current one. */
  ownerToken: string | null;
  /** The `default` agent's token, when known here. */
  agentToken: string | null;
}

export function writeSecret(path: string, token: string): void {
  writeFileSync(path, `${token}\n`, { mode: 0o600 });
  chmodSync(path, 0o600);
}

export function readSecret(path: string): string | null {
  if (!existsSync(path)) return null;
  const token = readFileSync(path, 'utf8').trim();
  return token === '' ? null : token;
}

/** Removes `<data>/owner.token` (a passkey replaced it); true when there was one. */
export function removeOwnerTokenFile(data: string): boolean {
  const path = join(data, OWNER_TOKEN_FILE);
  if (!existsSync(path)) return false;
  rmSync(path, { force: true });
  return true;
}

/** The owner token of `data` (null when the folder has none). */
export const ownerTokenIn = (data: string) => readSecret(join(data, OWNER_TOKEN_FILE));

/**
 * The owner token of the folder's store: made at first start (`owner.token`,
 * 0600), so the owner can answer approvals from the CLI even when only a
 * stdio or standalone door uses the folder.
 */
export async function ensureOwner(principals: Principals, data: string, logger: Logger) {
  const path = join(data, OWNER_TOKEN_FILE);
  if (await principals.hasPasskey()) {
    // Issue 25: once a passkey is enrolled the plain token is not kept (its hash stays in the store).
    removeOwnerTokenFile(data);
    return null;
  }
  const kept = readSecret(path);
  if (!(await principals.hasOwner())) {
    const token = kept ?? newToken('ok_');
    if (!kept) writeSecret(path, token);
    await principals.setOwnerToken(token);
    return token;
  }
  if (kept && (await principals.isOwnerToken(kept))) return kept;
  // The store's owner token was made (or rotated) elsewhere: this folder's copy is not it.
  logger.warn(
    { file: path },
    kept
      ? 'owner.token here is not the owner token of this store (rotated elsewhere?); run `airlock owner rotate` to make a new one'
      : 'this store already has an owner token, kept in the data folder of the instance that made it',
  );
  return null;
}

async function ensureDefaultAgent(principals: Principals, data: string, given: string | undefined) {
  const path = join(data, DEFAULT_AGENT_FILE);
  if (given) {
    // --token / AIRLOCK_TOKEN set the default agent's token (authority.md §1).
    await principals.setAgentToken(DEFAULT_AGENT, given);
    return given;
  }
  const kept = readSecret(path);
  if (kept) {
    const who = await principals.authenticate(kept);
    if (who?.kind === 'agent' && who.agent === DEFAULT_AGENT) return kept;
  }
  // First start: make the agent. A revoked or re-keyed `default` is never brought back.
  if ((await principals.listAgents()).some((a) => a.name === DEFAULT_AGENT)) return null;
  const made = await principals.addAgent(DEFAULT_AGENT);
  if ('ok' in made) return null;
  writeSecret(path, made.token);
  return made.token;
}

export async function ensureCredentials(
  principals: Principals,
  data: string,
  options: { agentToken?: string | undefined; logger: Logger },
): Promise<Credentials> {
  return {
    ownerToken: await ensureOwner(principals, data, options.logger),
    agentToken: await ensureDefaultAgent(principals, data, options.agentToken),
  };
}
