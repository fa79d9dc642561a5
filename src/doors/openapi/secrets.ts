/**
 * Keeping configured secrets out of everything the door shows: results,
 * error messages and its log lines (spec/openapi.md "Calling the API
 * safely"; the audit trail holds only a digest of the agent's arguments).
 *
 * An API may echo a secret in any form it took on the wire — the URL of a
 * failed request in a 500 body, a header it decoded — so every form is
 * scrubbed: as it is, `encodeURIComponent`, the form encoding
 * `URLSearchParams` writes (`+` for a space, `%7E` for `~`), base64 (basic
 * auth's `user:password`, or the value alone; standard and URL-safe), and
 * JSON-escaped, as a result shows a string. Percent escapes match in either
 * case. A secret shorter than `MIN_SECRET_LENGTH` would match ordinary text,
 * so it is refused when the door is configured rather than left unscrubbed.
 */
import { wireForms, createScrubber, scrubbedLogger } from '../../kernel/index.js';
import { ConfigError } from './config-error.js';
import { unsafeHeaderValue } from './http/build.js';

/** The scrubbing itself is the kernel's (`kernel/audit/scrub.ts`); re-exported for this door's modules. */
export { wireForms, createScrubber, scrubbedLogger };

export const MIN_SECRET_LENGTH = 4;

export interface ConfiguredSecret {
  value: string;
  /** What it is configured for, as messages name it: `query parameter 'api_key' (PLANE_API_KEY)`. */
  source: string;
  /** Sent as a header value as it is, so it must be one HTTP can carry. */
  inHeader?: boolean;
}

/** Throws a `ConfigError` naming the first secret that cannot be scrubbed or sent. */
export function refuseUnusable(secrets: ConfiguredSecret[]): void {
  for (const { value, source, inHeader } of secrets) {
    if (value.length < MIN_SECRET_LENGTH)
      throw new ConfigError(
        `${source} is ${value.length} character${value.length === 1 ? '' : 's'} long; a secret needs at least ${MIN_SECRET_LENGTH}, or it cannot be told apart from ordinary text and kept out of results. Configure the full secret.`,
      );
    const why = inHeader ? unsafeHeaderValue(value) : null;
    if (why)
      throw new ConfigError(
        `${source}: ${why}, which an HTTP header cannot carry. Configure the secret without it.`,
      );
  }
}
