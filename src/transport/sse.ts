/**
 * The event stream `GET /api/v1/events` (spec/kernel.md §9): every frame has
 * an `id`; a fresh connection first gets a `snapshot` frame; `Last-Event-ID`
 * replays from the bus ring, with a snapshot first when the ring no longer
 * reaches back; keep-alive comments keep proxies from closing the stream.
 * Frames are `data:` JSON objects with an `event` field. The Koharu wire
 * (`GET /events`, the seed's stream) also names each frame with an `event:`
 * line in PascalCase (`JobStarted`, `JobFinished`, `SceneChanged`) so an
 * `EventSource` listener for that name receives it.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { DeliveredEvent, EventBus } from '../kernel/events.js';
import { header } from './http-util.js';

export interface SseOptions {
  bus: EventBus;
  snapshot(): Promise<Record<string, unknown>>;
  keepAliveMs?: number;
  /**
   * Whether the caller may still listen (authority.md §1): asked when agents
   * or the owner's credentials change, and at every keep-alive; the stream
   * ends once it answers false (a revoked agent, a signed-out browser).
   */
  stillAllowed?: () => Promise<boolean>;
  /** Which events this caller may see (agents: `visibleToAgent`); default all. */
  visible?: (data: { event: string; [key: string]: unknown }) => boolean;
  /** Add an `event: <PascalCase>` line to each frame (the Koharu wire). */
  named?: boolean;
}

const CREDENTIAL_EVENTS = new Set(['agentsChanged', 'ownerChanged']);

/** `jobStarted` → `JobStarted`: the seed's event names. */
export function pascalEventName(event: string): string {
  return event.charAt(0).toUpperCase() + event.slice(1);
}

export function writeFrame(
  res: ServerResponse,
  id: number,
  data: { event: string },
  named = false,
): void {
  const name = named ? `event: ${pascalEventName(data.event)}\n` : '';
  res.write(`id: ${id}\n${name}data: ${JSON.stringify(data)}\n\n`);
}

/**
 * Events only the owner sees (authority.md §1: an agent learns nothing of
 * another agent's calls or the owner's decisions): the inbox, the audit
 * trail, grants, policy and principal changes. `toolCalled`,
 * `taskChanged`, `approvalRequested` and `approvalDecided` reach an agent
 * for its own calls, MCP tasks and approvals only.
 */
const OWNER_ONLY = new Set([
  'auditRecorded',
  'grantRevoked',
  'policyChanged',
  'agentsChanged',
  'ownerChanged',
  'jobCancelRequested',
]);

/** What an agent's event stream may carry. */
export function visibleToAgent(agent: string) {
  return (data: { event: string; [key: string]: unknown }): boolean => {
    if (OWNER_ONLY.has(data.event)) return false;
    if (data.event === 'toolCalled' || data.event === 'taskChanged') return data.agent === agent;
    if (data.event === 'approvalRequested' || data.event === 'approvalDecided') {
      const approval = data.approval as { agent?: unknown } | undefined;
      return approval?.agent === agent;
    }
    return true;
  };
}

export async function serveEvents(
  req: IncomingMessage,
  res: ServerResponse,
  options: SseOptions,
): Promise<void> {
  const { bus } = options;
  res.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache, no-transform',
    connection: 'keep-alive',
    'x-accel-buffering': 'no',
  });
  res.write('retry: 2000\n\n');

  // Buffer live events while the snapshot/replay is written, so none is lost.
  const pending: DeliveredEvent[] = [];
  let live = false;
  let lastSent = 0;
  const send = (e: DeliveredEvent) => {
    if (e.id <= lastSent) return;
    lastSent = e.id;
    if (options.visible && !options.visible(e.data)) return;
    writeFrame(res, e.id, e.data, options.named);
  };
  let ended = false;
  const recheck = () => {
    if (!options.stillAllowed || ended) return;
    void options.stillAllowed().then(
      (allowed) => {
        if (!allowed && !ended) {
          ended = true;
          res.end();
        }
      },
      () => undefined,
    );
  };
  const unsubscribe = bus.subscribe((e) => {
    if (CREDENTIAL_EVENTS.has(e.data.event)) recheck();
    if (live) send(e);
    else pending.push(e);
  });

  const lastEventId = Number(header(req, 'last-event-id') ?? req.headers['last-event-id'] ?? NaN);
  const replay =
    Number.isInteger(lastEventId) && lastEventId >= 0 ? await bus.since(lastEventId) : null;
  if (replay === null) {
    const at = bus.lastId;
    const snapshot = await options.snapshot();
    writeFrame(res, at, { event: 'snapshot', ...snapshot }, options.named);
    lastSent = at;
  } else {
    lastSent = lastEventId;
    for (const e of replay) send(e);
  }
  for (const e of pending) send(e);
  live = true;

  const keepAlive = setInterval(() => {
    res.write(': keep-alive\n\n');
    recheck();
  }, options.keepAliveMs ?? 15_000);
  const stop = () => {
    clearInterval(keepAlive);
    unsubscribe();
  };
  req.on('close', stop);
  res.on('close', stop);
}
