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
import type { AirlockEvent, DeliveredEvent, EventBus } from '../../kernel/events/events.js';
import { header } from './http-util.js';
import { agentNameOf } from '../../kernel/connection.js';

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
  /**
   * What this caller sees of an event: the frame's data, or null to skip it
   * (agents: `agentView`); default every event as published.
   */
  view?: (data: AirlockEvent) => AirlockEvent | null;
  /**
   * Also ask `stillAllowed` this often (ms): the owner's streams use it so an
   * `airlock owner rotate` run by the CLI, which publishes on no bus of this
   * process, still ends them within this bound (issue 24 §7).
   */
  recheckMs?: number;
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

type View = (data: AirlockEvent) => AirlockEvent | null;

/** An event the agent sees for its own doings only (the `agent` field names whose they are). */
const own =
  (agent: string): View =>
  (data) =>
    data.agent === agent ? data : null;

/** Its own job's event, without the `agent` field (the seed's shapes: `jobStarted {id, kind}`, …). */
const ownJob =
  (agent: string): View =>
  ({ agent: whose, ...rest }) =>
    whose === agent ? (rest as AirlockEvent) : null;

/**
 * What an agent's event stream carries (authority.md §1, issue 24), by
 * allow-list: an event not named here is the owner's alone (the inbox, the
 * audit trail, grants, policy and principal changes, and whatever is added
 * later). An agent sees its own calls, MCP tasks, approvals and jobs;
 * scene epochs without their label (the label may say what another
 * principal changed); and tool-list changes.
 */
function agentViews(agent: string): Record<string, View> {
  const mine = own(agent);
  const myJob = ownJob(agent);
  // A call and an approval as shown name the agent (without its id); tasks
  // and jobs carry its key.
  const name = agentNameOf(agent);
  const approval: View = (data) =>
    (data.approval as { agent?: unknown } | undefined)?.agent === name ? data : null;
  return {
    toolCalled: own(name),
    taskChanged: mine,
    approvalRequested: approval,
    approvalDecided: approval,
    approvalOrphaned: approval,
    jobStarted: myJob,
    jobProgress: myJob,
    jobWarning: myJob,
    jobFinished: myJob,
    sceneChanged: ({ event, epoch }) => ({ event, epoch }),
    toolsChanged: (data) => data,
  };
}

/** What `agent`'s event stream shows of an event: its frame data, or null when it is not the agent's to see. */
export function agentView(agent: string): View {
  const views = agentViews(agent);
  return (data) => (Object.hasOwn(views, data.event) ? views[data.event]!(data) : null);
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
    const data = options.view ? options.view(e.data) : e.data;
    if (data) writeFrame(res, e.id, data, options.named);
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
  const recheckTimer = options.recheckMs ? setInterval(recheck, options.recheckMs) : undefined;
  const stop = () => {
    clearInterval(keepAlive);
    clearInterval(recheckTimer);
    unsubscribe();
  };
  req.on('close', stop);
  res.on('close', stop);
}
