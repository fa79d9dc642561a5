/** Errors the relay reports to callers of `Puente.enviar` (codes are part of the wire contract). */
export type RelayErrorCode =
  | 'WU_MCP_NOT_CONNECTED'
  | 'WU_MCP_DISCONNECTED'
  | 'WU_MCP_TIMEOUT'
  | 'WU_MCP_CANCELLED'
  | 'WU_MCP_CLOSED'
  | 'WU_MCP_PAYLOAD_TOO_LARGE'
  | (string & {});

export class RelayError extends Error {
  readonly code: RelayErrorCode;
  /** True when the page answered the error (as opposed to the transport failing). */
  readonly fromBridge: boolean;
  constructor(code: RelayErrorCode, message: string, fromBridge = false) {
    super(message);
    this.name = 'RelayError';
    this.code = code;
    this.fromBridge = fromBridge;
  }
}
