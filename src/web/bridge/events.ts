/**
 * The page's event bus, with a ring of the last 200 events (redacted when
 * read). `*` listeners see every event.
 */
import { isSecretName, REDACTED, redactValue } from './redact.js';

export type EventListener = (data: unknown, event: string) => void;

export interface EventRecord {
  event: string;
  data: unknown;
  timestamp: number;
  source: 'page' | 'agent';
}

const RING = 200;
const listeners = new Map<string, Set<EventListener>>();
const ring: EventRecord[] = [];
let total = 0;

export function on(event: string, listener: EventListener): () => void {
  let set = listeners.get(event);
  if (!set) listeners.set(event, (set = new Set()));
  set.add(listener);
  return () => off(event, listener);
}

export function off(event: string, listener: EventListener): void {
  listeners.get(event)?.delete(listener);
}

export function emit(event: string, data?: unknown, source: 'page' | 'agent' = 'page'): void {
  ring.push({ event, data, timestamp: Date.now(), source });
  if (ring.length > RING) ring.shift();
  total++;
  for (const l of [...(listeners.get(event) ?? []), ...(listeners.get('*') ?? [])]) {
    try {
      l(data, event);
    } catch (error) {
      // One failing listener must not stop the others; surface it as an uncaught error.
      queueMicrotask(() => {
        throw error;
      });
    }
  }
}

export function recentEvents(limit: number): { events: unknown[]; count: number; total: number } {
  const events = ring.slice(-limit).map((r) => ({ ...r, data: redactEventData(r.event, r.data) }));
  return { events, count: events.length, total };
}

/** An event's data as an agent may see it: all of it hidden when the event's name is a secret name. */
export function redactEventData(event: string, data: unknown): unknown {
  if (isSecretName(event)) return data === undefined ? null : REDACTED;
  return redactValue(data) ?? null;
}

export const eventCount = () => total;

export const events = { on, off, emit: (event: string, data?: unknown) => emit(event, data) };
