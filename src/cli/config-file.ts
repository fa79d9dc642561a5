/**
 * The config file (`--config FILE`): reading it, and its `policy` section.
 * Light on imports, so owner commands (`airlock approvals`, `airlock policy`)
 * load fast.
 */
import { readFileSync } from 'node:fs';
import { PolicyConfigSchema, type PolicyConfig } from '../kernel/policy.js';
import { UsageError } from './args.js';

export function readConfig(path: string | undefined): Record<string, unknown> {
  if (!path) return {};
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    throw new UsageError(`--config: cannot read '${path}'`);
  }
  try {
    const value = JSON.parse(text) as unknown;
    if (value === null || typeof value !== 'object' || Array.isArray(value))
      throw new Error('not an object');
    return value as Record<string, unknown>;
  } catch {
    throw new UsageError(`--config: '${path}' is not a JSON object`);
  }
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
