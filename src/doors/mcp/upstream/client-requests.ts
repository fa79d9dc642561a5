/**
 * Requests an upstream sends back during a call (spec/gateway.md §2
 * "Requests from the upstream"): sampling, elicitation and roots. They are
 * forwarded only to the agent whose call is in flight on that upstream —
 * never to another agent: when calls of several connections are in flight
 * at once Airlock cannot tell which one the upstream means, and forwards to
 * none — and only as the owner allows per upstream (`allow`):
 * - `sampling/createMessage`: refused unless `allow.sampling`;
 * - `elicitation/create`, form mode: refused unless `allow.formElicitation`;
 *   URL mode is never sent to the agent's client (it may ask for consent or
 *   secrets): it becomes an item in the owner's inbox (a consent card
 *   naming the link, as text), and the upstream hears `accept` when the
 *   owner approves it, `decline` when denied, `cancel` when the call ends
 *   or the wait runs out;
 * - `roots/list`: the calling client's roots when `allow.roots`, else none.
 * Refusals are MCP errors whose message says what to change.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { ProtocolError } from '@modelcontextprotocol/client';
import type { Client } from '@modelcontextprotocol/client';
import type { McpRequestScope } from '../../../transport/surface.js';

export interface ClientRequestsAllowed {
  sampling: boolean;
  formElicitation: boolean;
  roots: boolean;
}

/** One agent call in flight on an upstream. */
export interface Caller {
  /** The connection (agent session) that made the call. */
  connection: string;
  /** Its MCP request, when it came over MCP. */
  scope: McpRequestScope | null;
  signal: AbortSignal;
}

/** One call's MCP request, and whether it still needs the async context to reach forwardCall. */
interface Held {
  scope: McpRequestScope;
  held: boolean;
}

const requests = new AsyncLocalStorage<Held>();
/**
 * Calls whose request has not yet reached forwardCall. On Node 20 an
 * enabled AsyncLocalStorage puts an init hook on every promise in the
 * process (~0.15 ms of a forwarded call's CPU, measured): the storage is
 * enabled only while some call still has to carry its request to
 * forwardCall, and disabled when none has (`run` enables it again).
 */
let holding = 0;

function release(held: Held): void {
  if (!held.held) return;
  held.held = false;
  holding -= 1;
  if (holding === 0) requests.disable();
}

/** `McpSurface.withMcpRequest`: the call's MCP request, in reach of forwardCall. */
export async function withMcpRequest<T>(
  scope: McpRequestScope,
  call: () => Promise<T>,
): Promise<T> {
  const held: Held = { scope, held: true };
  holding += 1;
  try {
    return await requests.run(held, call);
  } finally {
    release(held); // a call refused before it was forwarded
  }
}

/**
 * The call's MCP request, taken once by forwardCall as it starts: the rest
 * of the call (the upstream's round trip, the answer) runs without the
 * async context.
 */
export function takeRequest(): McpRequestScope | null {
  const held = requests.getStore();
  if (!held) return null;
  release(held);
  return held.scope;
}

/** The calls in flight on one upstream. */
export class Callers {
  private readonly calls = new Set<Caller>();

  /** How many calls are in flight. */
  get size(): number {
    return this.calls.size;
  }

  enter(caller: Caller): () => void {
    this.calls.add(caller);
    return () => this.calls.delete(caller);
  }

  /** The one connection with calls in flight (its latest call), else why not. */
  only(): Caller | 'none' | 'several' {
    let found: Caller | null = null;
    for (const c of this.calls) {
      if (found && found.connection !== c.connection) return 'several';
      found = c;
    }
    return found ?? 'none';
  }
}

const INVALID_REQUEST = -32600;
const refuse = (message: string) => new ProtocolError(INVALID_REQUEST, message);

type ClientSide = NonNullable<McpRequestScope['client']>;

/** The calling agent's client, or the refusal that explains why there is none. */
function callerClient(
  name: string,
  callers: Callers,
  what: string,
  capability: string,
): ClientSide {
  const caller = callers.only();
  if (caller === 'none')
    throw refuse(
      `Airlock forwards ${what} from '${name}' only to the agent whose call is in flight, and none is.`,
    );
  if (caller === 'several')
    throw refuse(
      `Calls of several agents are in flight on '${name}'; Airlock cannot tell which one this ${what} is for, so it forwards it to none. Ask again while only one call runs.`,
    );
  const client = caller.scope?.client;
  const declared = caller.scope?.clientCapabilities[capability];
  if (!client || declared === undefined)
    throw refuse(
      `The calling agent's client cannot take ${what} during a call (it did not declare ${capability}, or its session cannot be asked mid-call).`,
    );
  return client;
}

/** What the owner did with a URL elicitation put in the inbox. */
export type OwnerAnswer = 'accept' | 'decline' | 'cancel';
export type OwnerInbox = (
  caller: Caller,
  request: { url: string; message: string },
  signal: AbortSignal,
) => Promise<OwnerAnswer>;

const MAX_URL = 2000;

/** A URL elicitation: to the owner's inbox, never to the agent; http(s) only. */
async function toOwner(
  name: string,
  params: { url?: unknown; message?: unknown },
  callers: Callers,
  inbox: OwnerInbox | undefined,
  signal: AbortSignal,
) {
  const caller = callers.only();
  const url = URL.canParse(String(params.url)) ? new URL(String(params.url)) : null;
  if (!url || !/^https?:$/.test(url.protocol) || String(params.url).length > MAX_URL)
    throw refuse(`Airlock passes on only http(s) links of at most ${MAX_URL} characters.`);
  if (typeof caller === 'string' || !inbox)
    throw refuse(
      `Airlock puts a URL elicitation from '${name}' in the owner's inbox only during one agent's call${caller === 'several' ? ' (calls of several agents are in flight)' : ''}.`,
    );
  const message = typeof params.message === 'string' ? params.message.slice(0, 300) : '';
  const action = await inbox(caller, { url: url.href, message }, signal);
  return { action };
}

export function installClientRequests(
  client: Client,
  options: {
    name: string;
    allow: ClientRequestsAllowed;
    callers: Callers;
    /** Puts a URL elicitation in the owner's inbox and waits for the owner (gateway.ts). */
    ownerInbox?: OwnerInbox;
  },
): void {
  const { name, allow, callers } = options;
  const setting = (key: keyof ClientRequestsAllowed) => `upstreams.${name}.allow.${key}`;
  client.setRequestHandler('sampling/createMessage', async (request, ctx) => {
    if (!allow.sampling)
      throw refuse(
        `Airlock does not pass sampling requests from '${name}' to agents: the owner has not allowed it (${setting('sampling')}).`,
      );
    const to = callerClient(name, callers, 'a sampling request', 'sampling');
    return (await to.sample(request.params, { signal: ctx.mcpReq.signal })) as never;
  });
  client.setRequestHandler('elicitation/create', async (request, ctx) => {
    const params = request.params as { mode?: string };
    // Never to the agent's client (it may ask for consent or secrets): the owner's inbox.
    if (params.mode === 'url')
      return (await toOwner(
        name,
        request.params as never,
        callers,
        options.ownerInbox,
        ctx.mcpReq.signal,
      )) as never;
    if (!allow.formElicitation)
      throw refuse(
        `Airlock does not pass form elicitations from '${name}' to agents: the owner has not allowed it (${setting('formElicitation')}).`,
      );
    const to = callerClient(name, callers, 'an elicitation', 'elicitation');
    return (await to.elicit(request.params, { signal: ctx.mcpReq.signal })) as never;
  });
  client.setRequestHandler('roots/list', async (_request, ctx) => {
    if (!allow.roots) return { roots: [] };
    const caller = callers.only();
    if (
      typeof caller === 'string' ||
      !caller.scope?.client ||
      !caller.scope.clientCapabilities.roots
    )
      return { roots: [] };
    return (await caller.scope.client.listRoots({ signal: ctx.mcpReq.signal })) as never;
  });
}
