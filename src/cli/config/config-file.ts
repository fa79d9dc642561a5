/**
 * The config file (`--config FILE`): reading it (every key checked, see
 * config-check.ts), and its `policy` section. Light on imports, so owner
 * commands (`airlock approvals`, `airlock policy`) load fast.
 */
import { readFileSync } from 'node:fs';
import { appendFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { PolicyConfigSchema, type PolicyConfig } from '../../kernel/authority/policy.js';
import {
  RetentionConfigSchema,
  retentionFromConfig,
  type RetentionOptions,
} from '../../kernel/audit/retention.js';
import type { PresenceMode } from '../../kernel/authority/presence.js';
import { UsageError } from '../args.js';
import { checkConfigFile, OwnerConfigSchema } from './config-check.js';

export function readConfig(path: string | undefined): Record<string, unknown> {
  if (!path) return {};
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    throw new UsageError(`--config: cannot read '${path}'`);
  }
  let value: unknown;
  try {
    value = JSON.parse(text) as unknown;
  } catch {
    value = undefined;
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    throw new UsageError(`--config: '${path}' is not a JSON object`);
  const config = value as Record<string, unknown>;
  checkConfigFile(config, path);
  return config;
}

/** The config file's `policy` section (authority.md §3); a bad one is a usage error naming the field. */
export function configPolicy(
  config: Record<string, unknown> | undefined,
): PolicyConfig | undefined {
  if (config?.policy === undefined) return undefined;
  const parsed = PolicyConfigSchema.safeParse(config.policy);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = ['policy', ...(issue?.path ?? [])].join('.');
    throw new UsageError(`--config: ${where}: ${issue?.message ?? 'invalid'}`);
  }
  return parsed.data;
}

/**
 * The config file's `retention` section: `{"journalHours": 24, "auditDays":
 * 90, "auditArchive": "audit-archive.jsonl", "sweepMinutes": 10}`; the
 * archive (relative to the data folder) receives pruned audit entries as
 * JSON lines before they are deleted.
 */
export function configRetention(
  config: Record<string, unknown> | undefined,
  data: string,
): RetentionOptions | undefined {
  if (config?.retention === undefined) return undefined;
  const parsed = RetentionConfigSchema.safeParse(config.retention);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = ['retention', ...(issue?.path ?? [])].join('.');
    throw new UsageError(`--config: ${where}: ${issue?.message ?? 'invalid'}`);
  }
  const archive = parsed.data.auditArchive;
  return retentionFromConfig(
    parsed.data,
    archive ? (lines) => appendFile(resolve(data, archive), lines, { mode: 0o600 }) : undefined,
  );
}

/** The config file's `owner` section: `{"presence": "passkey" | "none"}` (issue 25). */
export function configPresence(
  config: Record<string, unknown> | undefined,
): PresenceMode | undefined {
  if (config?.owner === undefined) return undefined;
  const parsed = OwnerConfigSchema.safeParse(config.owner);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = ['owner', ...(issue?.path ?? [])].join('.');
    throw new UsageError(`--config: ${where}: ${issue?.message ?? 'invalid'}`);
  }
  return parsed.data.presence;
}
