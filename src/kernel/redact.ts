/**
 * Secret redaction for audit digests, logs and diagnostics. A key counts as
 * secret when its name contains one of the words below, case-insensitively
 * (spec/page.md "Redaction", spec/kernel.md §10).
 */
const SECRET_WORDS = [
  'password',
  'passwd',
  'token',
  'secret',
  'apikey',
  'api_key',
  'authorization',
  'cookie',
  'session',
  'credential',
];

export const REDACTED = '[REDACTED]';

export function isSecretKey(key: string): boolean {
  const k = key.toLowerCase().replace(/-/g, '_');
  return SECRET_WORDS.some((w) => k.includes(w) || k.replace(/_/g, '').includes(w));
}

/** A deep copy with secret-named keys' values replaced by `[REDACTED]`. */
export function redact(value: unknown, depth = 0): unknown {
  if (depth > 32) return REDACTED;
  if (Array.isArray(value)) return value.map((v) => redact(v, depth + 1));
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value))
      out[k] = isSecretKey(k) ? REDACTED : redact(v, depth + 1);
    return out;
  }
  return value;
}
