/** The one way tests connect an MCP client over streamable HTTP. */
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';

/** The protocol version a "modern" client pins (stateless era), as opposed to legacy negotiation. */
export const MODERN_PROTOCOL = '2026-07-28';

export interface ConnectOptions {
  /** The client's name in its implementation info. */
  name?: string;
  version?: string;
  /** Sent as `authorization: Bearer <token>` on every request. */
  token?: string;
  /** Pins this protocol version instead of negotiating (e.g. MODERN_PROTOCOL). */
  pin?: string;
}

/** Connects a client to the MCP endpoint at `url` (the full endpoint, e.g. `${base}/mcp`). */
export async function connectClient(
  url: string | URL,
  options: ConnectOptions = {},
): Promise<Client> {
  const client = new Client(
    { name: options.name ?? 'test-client', version: options.version ?? '1.0.0' },
    options.pin ? { versionNegotiation: { mode: { pin: options.pin } } } : {},
  );
  await client.connect(
    new StreamableHTTPClientTransport(
      new URL(url),
      options.token
        ? { requestInit: { headers: { authorization: `Bearer ${options.token}` } } }
        : {},
    ),
  );
  return client;
}
