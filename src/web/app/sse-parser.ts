/**
 * An incremental parser for `text/event-stream` (WHATWG HTML, "Server-sent
 * events", §9.2.6): fed arbitrary chunks, it dispatches each complete event.
 * The UI reads the stream with `fetch` rather than `EventSource` so it can
 * send the bearer token and `Last-Event-ID` itself.
 */
export interface SseMessage {
  /** The last `id:` seen so far (carried over from earlier events, as the spec says). */
  id: string;
  event: string;
  data: string;
}

export interface SseParser {
  push(chunk: string): void;
  /** The last event id seen; sent back as `Last-Event-ID` on reconnect. */
  readonly lastEventId: string;
  /** The server's `retry:` advice in ms, if it gave one. */
  readonly retry: number | null;
}

export function createSseParser(onMessage: (message: SseMessage) => void): SseParser {
  let buffer = '';
  let data: string[] = [];
  let event = '';
  let lastEventId = '';
  let retry: number | null = null;
  let pendingCr = false;

  const line = (text: string) => {
    if (text === '') {
      if (data.length > 0)
        onMessage({ id: lastEventId, event: event || 'message', data: data.join('\n') });
      data = [];
      event = '';
      return;
    }
    if (text.startsWith(':')) return;
    const colon = text.indexOf(':');
    const name = colon < 0 ? text : text.slice(0, colon);
    let value = colon < 0 ? '' : text.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (name === 'data') data.push(value);
    else if (name === 'event') event = value;
    else if (name === 'id' && !value.includes('\0')) lastEventId = value;
    else if (name === 'retry' && /^\d+$/.test(value)) retry = Number(value);
  };

  return {
    push(chunk) {
      let text = chunk;
      // A CR at the end of the last chunk and an LF at the start of this one are one line break.
      if (pendingCr && text.startsWith('\n')) text = text.slice(1);
      pendingCr = false;
      buffer += text;
      const parts = buffer.split(/\r\n|\r|\n/);
      buffer = parts.pop() ?? '';
      if (buffer === '' && text.endsWith('\r')) pendingCr = true;
      for (const p of parts) line(p);
    },
    get lastEventId() {
      return lastEventId;
    },
    get retry() {
      return retry;
    },
  };
}
