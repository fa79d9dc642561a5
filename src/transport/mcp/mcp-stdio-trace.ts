/**
 * Server spans over stdio (issue 33): the stdio wire is wrapped so each
 * request the client sends is handled inside its span (the kernel's stage
 * spans and a door's outbound hops nest in it), and the span ends when the
 * answer to that request is sent. Without a tracer the wire is used as is.
 */
import type {
  JSONRPCMessage,
  MessageExtraInfo,
  RequestId,
  Transport,
} from '@modelcontextprotocol/server';
import type { McpRequestTracer, StdioRequestSpan } from './mcp-trace.js';

const answerId = (message: JSONRPCMessage): RequestId | undefined =>
  'id' in message && !('method' in message) ? message.id : undefined;

/** `wire` with a server span per request (see above). */
export function withRequestSpans(wire: Transport, tracer: McpRequestTracer): Transport {
  const open = new Map<RequestId, StdioRequestSpan>();
  const entry: Transport = {
    start: () => wire.start(),
    async send(message, options) {
      const id = answerId(message);
      try {
        return await wire.send(message, options);
      } finally {
        if (id !== undefined) {
          open.get(id)?.end();
          open.delete(id);
        }
      }
    },
    async close() {
      for (const span of open.values()) span.end();
      open.clear();
      await wire.close();
    },
    setProtocolVersion: (version) => wire.setProtocolVersion?.(version),
  };
  wire.onmessage = (message: JSONRPCMessage, extra?: MessageExtraInfo) => {
    const span = tracer.stdio(message);
    if (!span) return entry.onmessage?.(message, extra);
    open.get((message as { id: RequestId }).id)?.end();
    open.set((message as { id: RequestId }).id, span);
    return span.within(() => entry.onmessage?.(message, extra));
  };
  wire.onclose = () => entry.onclose?.();
  wire.onerror = (error) => entry.onerror?.(error);
  return entry;
}
