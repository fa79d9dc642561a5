/**
 * One bridge command as a tool outcome: the page's answer becomes the value,
 * the page's error or a transport failure becomes a `Failure` carrying the
 * WU code (`isError` on the wire). The relay also scrubs its own token from
 * whatever the page answers, whatever key it hides under.
 */
import type { AddressInfo } from 'node:net';
import { failure, REDACTED, type ErrorCode, type Failure } from '../../kernel/index.js';
import type { RelayConfig } from './config.js';
import { RelayError } from './relay-error.js';
import type { SendOptions } from './puente.js';

/** What the tools need from a `Puente`. */
export interface CommandSender {
  enviar(command: string, params?: unknown, options?: SendOptions): Promise<unknown>;
  conectado(): boolean;
  address(): AddressInfo | null;
  /** The connected page's origin, or null. */
  origin(): string | null;
}

const KERNEL_CODE: Record<string, ErrorCode> = {
  WU_MCP_NOT_CONNECTED: 'unavailable',
  WU_MCP_DISCONNECTED: 'unavailable',
  WU_MCP_CLOSED: 'unavailable',
  WU_MCP_TIMEOUT: 'timeout',
  WU_MCP_CANCELLED: 'cancelled',
  WU_MCP_PAYLOAD_TOO_LARGE: 'requestTooLarge',
};

/** Replaces every occurrence of `secret` in the JSON of `value`. */
export function scrubSecret<T>(value: T, secret: string | null): T {
  if (!secret || value === undefined) return value;
  const text = JSON.stringify(value);
  const escaped = JSON.stringify(secret).slice(1, -1);
  if (!text.includes(escaped)) return value;
  return JSON.parse(text.split(escaped).join(REDACTED)) as T;
}

export function relayFailure(error: unknown): Failure {
  if (error instanceof RelayError) {
    const code = error.fromBridge ? 'upstreamError' : (KERNEL_CODE[error.code] ?? 'upstreamError');
    return failure(code, error.message, { code: error.code });
  }
  throw error;
}

export async function sendCommand(
  relay: CommandSender | null,
  config: RelayConfig,
  command: string,
  params: unknown,
  signal?: AbortSignal,
  traceContext?: Record<string, string>,
): Promise<unknown> {
  if (!relay)
    return failure('unavailable', 'The page relay is not listening; restart the server.', {
      code: 'WU_MCP_NOT_CONNECTED',
    });
  try {
    const result = await relay.enviar(command, params ?? {}, {
      ...(signal ? { signal } : {}),
      ...(traceContext && Object.keys(traceContext).length ? { traceContext } : {}),
    });
    return scrubSecret(result ?? null, config.token);
  } catch (error) {
    return relayFailure(error);
  }
}
