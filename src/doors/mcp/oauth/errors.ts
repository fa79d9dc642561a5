/**
 * What goes wrong with an upstream's OAuth grant, in words for the owner:
 * the owner must reconnect it, a connect cannot go on, or a request the
 * upstream refused for its authorization (spec/gateway.md §1 "OAuth upstreams").
 */
import {
  InsufficientScopeError,
  SdkErrorCode,
  SdkHttpError,
  UnauthorizedError,
} from '@modelcontextprotocol/client';

/** The owner has to connect the upstream (again); the reason speaks to a person. */
export class ReconnectRequired extends Error {
  override name = 'ReconnectRequired';
  constructor(
    readonly upstream: string,
    readonly reason: string,
  ) {
    super(`the upstream '${upstream}' needs the owner to reconnect it: ${reason}`);
  }
}

/** A connect that cannot go on (no such pending connect, refused by the server); the message speaks to the owner. */
export class ConnectRefused extends Error {
  override name = 'ConnectRefused';
}

/**
 * Whether `error` (from a request to the upstream) means it refused
 * Airlock's authorization: why, and the scope it asks for when it wants more
 * (a 403 `insufficient_scope`, which only the owner's reconnect can grant).
 */
export function authorizationFailure(error: unknown): { reason: string; scope?: string } | null {
  if (error instanceof ReconnectRequired) return { reason: error.reason };
  if (error instanceof InsufficientScopeError)
    return {
      reason: `it asks for more access${error.requiredScope ? ` (scope ${error.requiredScope})` : ''}`,
      ...(error.requiredScope ? { scope: error.requiredScope } : {}),
    };
  if (error instanceof UnauthorizedError) return { reason: 'it refused the token' };
  if (error instanceof SdkHttpError && error.code === SdkErrorCode.ClientHttpAuthentication)
    return { reason: 'it refused the token even after a refresh' };
  return null;
}
