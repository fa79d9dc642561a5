/** Reads `GET /api/v1/events` as frames (`id` and parsed `data`), for the cluster suite. */

export interface Frame {
  id: number;
  data: { event: string; [key: string]: unknown };
}

export interface EventStream {
  readonly frames: Frame[];
  /** Frames other than the snapshot. */
  events(): Frame[];
  close(): void;
  /** Resolves when the stream ended (closed by either side). */
  readonly ended: Promise<void>;
}

export async function openEvents(
  base: string,
  token: string,
  lastEventId?: number,
): Promise<EventStream> {
  const ac = new AbortController();
  const res = await fetch(`${base}/api/v1/events`, {
    signal: ac.signal,
    headers: {
      authorization: `Bearer ${token}`,
      ...(lastEventId === undefined ? {} : { 'last-event-id': String(lastEventId) }),
    },
  });
  if (res.status !== 200) throw new Error(`events answered ${res.status}`);
  const frames: Frame[] = [];
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  const ended = (async () => {
    let buffer = '';
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return;
        buffer += decoder.decode(value, { stream: true });
        let cut: number;
        while ((cut = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, cut);
          buffer = buffer.slice(cut + 2);
          const id = /^id: (\d+)$/m.exec(block)?.[1];
          const data = /^data: (.*)$/m.exec(block)?.[1];
          if (id !== undefined && data !== undefined)
            frames.push({ id: Number(id), data: JSON.parse(data) as Frame['data'] });
        }
      }
    } catch {
      // Aborted or the instance died.
    }
  })();
  return {
    frames,
    events: () => frames.filter((f) => f.data.event !== 'snapshot'),
    close: () => ac.abort(),
    ended,
  };
}
