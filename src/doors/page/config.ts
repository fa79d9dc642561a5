/**
 * `loadConfig(env)`: the relay's configuration from the `WU_MCP_*` variables
 * (spec/page.md "Relay"). Every value is validated; an invalid one throws a
 * `ConfigError` naming the variable (never a silent default), and the token
 * is never part of a message.
 */
import { utf8Bytes } from '../../kernel/index.js';

export interface RelayConfig {
  readonly host: string;
  readonly port: number;
  /** Per-command timeout, ms. */
  readonly timeout: number;
  /** Time a socket has to authenticate, ms. */
  readonly authTimeout: number;
  /** WebSocket message limit, bytes. */
  readonly maxPayload: number;
  readonly token: string | null;
  readonly insecure: boolean;
  /** Exact origins, or null for the loopback http(s) default. */
  readonly allowedOrigins: ReadonlySet<string> | null;
}

export class ConfigError extends Error {
  readonly variable: string;
  constructor(variable: string, message: string) {
    super(`${variable} ${message}`);
    this.name = 'ConfigError';
    this.variable = variable;
  }
}

type Env = Readonly<Record<string, string | undefined>>;

function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined) return fallback;
  const value = /^\d{1,9}$/.test(raw.trim()) ? Number(raw.trim()) : NaN;
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new ConfigError(name, `must be an integer from ${min} to ${max} (got '${raw}')`);
  }
  return value;
}

function origins(raw: string | undefined): ReadonlySet<string> | null {
  if (raw === undefined) return null;
  const list = raw
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  if (list.length === 0)
    throw new ConfigError(
      'WU_MCP_ORIGINS',
      'must list at least one origin such as http://127.0.0.1:3000',
    );
  for (const origin of list) {
    let url: URL | null;
    try {
      url = new URL(origin);
    } catch {
      url = null;
    }
    if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:') || url.origin !== origin) {
      throw new ConfigError(
        'WU_MCP_ORIGINS',
        `must be exact http(s) origins without a path, separated by commas (bad entry '${origin}')`,
      );
    }
  }
  return new Set(list);
}

/**
 * Reads and validates the relay configuration.
 *
 * @example
 * const config = loadConfig(process.env); // throws ConfigError('WU_MCP_PORT …') on a bad port
 */
export function loadConfig(env: Env = process.env): RelayConfig {
  const insecureRaw = env.WU_MCP_INSECURE;
  if (insecureRaw !== undefined && insecureRaw !== '' && insecureRaw !== '0' && insecureRaw !== '1')
    throw new ConfigError(
      'WU_MCP_INSECURE',
      `must be 1 to allow running without a token, or unset (got '${insecureRaw}')`,
    );
  const insecure = insecureRaw === '1';

  const token = env.WU_MCP_TOKEN;
  if (token === undefined) {
    if (!insecure)
      throw new ConfigError(
        'WU_MCP_TOKEN',
        'is required: set a secret of 16 to 4096 UTF-8 bytes (or WU_MCP_INSECURE=1 for a local test without one)',
      );
  } else {
    const bytes = utf8Bytes(token);
    if (bytes < 16 || bytes > 4096)
      throw new ConfigError('WU_MCP_TOKEN', `must be 16 to 4096 UTF-8 bytes (got ${bytes} bytes)`);
  }

  const host = env.WU_MCP_HOST ?? '127.0.0.1';
  if (host === '' || /[\s/]/.test(host))
    throw new ConfigError(
      'WU_MCP_HOST',
      `must be a host name or address without spaces or '/' (got '${host}')`,
    );

  return Object.freeze({
    host,
    port: integer(env, 'WU_MCP_PORT', 19100, 1, 65535),
    timeout: integer(env, 'WU_MCP_TIMEOUT', 30000, 50, 300000),
    authTimeout: integer(env, 'WU_MCP_AUTH_TIMEOUT', 5000, 50, 60000),
    maxPayload: integer(env, 'WU_MCP_MAX_PAYLOAD', 1048576, 1024, 16777216),
    token: token ?? null,
    insecure,
    allowedOrigins: origins(env.WU_MCP_ORIGINS),
  });
}
