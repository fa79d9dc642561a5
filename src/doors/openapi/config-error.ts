/**
 * A mount the workspace cannot open (a bad `openapiOptions` section, an
 * unreadable document, a secret that cannot be kept out of results). The
 * workspace answers an error by this name as a usage error: exit 2, one
 * line naming what to fix.
 */
export class ConfigError extends Error {
  override name = 'ConfigError';
}
