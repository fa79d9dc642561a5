/**
 * Server spans over stdio (issue 33): the stdio wire is wrapped so each
 * request the client sends opens its span, and the span ends when the
 * answer to that request is sent. The request's handler runs inside its
 * span (`within`, given to the server as its `requestContext`), so the
 * kernel's stage spans and a door's outbound hops nest in it: the SDK's
 * stdio entry queues messages that arrive while it is busy (a request read
 * in one chunk with the `initialized` notification before it) and hands them
 * on from the context of the message that started its queue, so the context
 * at delivery alone is not enough. Without a tracer the wire is used as is.
 */
import type {
  JSONRPCMessage,
  MessageExtraInfo,
  RequestId,
  Transport,
} from '@modelcontextprotocol/server';
import type { McpRequestTracer, StdioRequestSpan } from './mcp-trace.js';
import type { RequestContext } from './mcp-server.js';

const answerId = (message: JSONRPCMessage): RequestId | undefined =>
  'id' in message && !('method' in message) ? message.id : undefined;

/** `wire` with a server span per request, and how to run a request's handler in it (see above). */
export function withRequestSpans(
  wire: Transport,
  tracer: McpRequestTracer,
): { wire: Transport; within: RequestContext } {
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
  const within: RequestContext = (id, run) => {
    const span = open.get(id);
    return span ? span.within(run) : run();
  };
  return { wire: entry, within };
}
