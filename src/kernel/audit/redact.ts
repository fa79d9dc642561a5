/**
 * Secret redaction for audit digests, logs and diagnostics. Which keys count
 * as secret is the one rule in `secret-names.ts` (spec/page.md "Redaction",
 * spec/kernel.md §10), shared with the page bridge.
 */
import { REDACTED, isSecretName } from './secret-names.js';

export { REDACTED, isSecretName };

/** A deep copy with secret-named keys' values replaced by `[REDACTED]`. */
export function redact(value: unknown, depth = 0): unknown {
  if (depth > 32) return REDACTED;
  if (Array.isArray(value)) return value.map((v) => redact(v, depth + 1));
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value))
      out[k] = isSecretName(k) ? REDACTED : redact(v, depth + 1);
    return out;
  }
  return value;
}
