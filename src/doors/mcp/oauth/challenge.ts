/**
 * What an upstream says when asked without a token (spec/gateway.md §1
 * "OAuth upstreams"): its 401's `WWW-Authenticate` names its
 * protected-resource metadata and the scope it wants (RFC 9728 §5.1, MCP
 * scope selection). Sent with its configured headers, never a token, and
 * no redirect followed.
 */
import { extractWWWAuthenticateParams } from '@modelcontextprotocol/client';

/** One unauthenticated JSON-RPC request to the upstream (its configured headers, no token). */
const probe = (
  url: string,
  headers: Record<string, string> | undefined,
  method: string,
  params: Record<string, unknown>,
) =>
  fetch(url, {
    method: 'POST',
    redirect: 'manual',
    headers: {
      ...headers,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 0, method, params }),
  })
    .then(async (res) => {
      await res.body?.cancel().catch(() => undefined);
      return res;
    })
    .catch(() => null);

/**
 * The upstream's own 401 (to `tools/list`, else `initialize`, without a
 * token): where its protected-resource metadata is and which scope it asks
 * for, when its `WWW-Authenticate` says (RFC 9728 §5.1); nothing otherwise.
 */
export async function challenge(
  url: string,
  headers: Record<string, string> | undefined,
): Promise<{ resourceMetadataUrl?: URL; scope?: string }> {
  let res = await probe(url, headers, 'tools/list', {});
  if (res?.status !== 401)
    res = await probe(url, headers, 'initialize', {
      protocolVersion: '2025-11-25',
      capabilities: {},
      clientInfo: { name: 'airlock', version: '1' },
    });
  if (res?.status !== 401) return {};
  const { resourceMetadataUrl, scope: asked } = extractWWWAuthenticateParams(res);
  return {
    ...(resourceMetadataUrl ? { resourceMetadataUrl } : {}),
    ...(asked ? { scope: asked } : {}),
  };
}
