/**
 * A URL elicitation from an upstream, as an item in the owner's inbox (a
 * consent card of the calling agent, door = the upstream's mount, one
 * capability per request so no grant answers a later one): the link and the
 * upstream's message are text on the card, scrubbed. The upstream hears
 * `accept` when the owner approves, `decline` when the owner denies,
 * `cancel` when the call ends or the wait runs out. The kernel's cap on one
 * agent's pending asks bounds how much an upstream can put there.
 */
import { randomUUID } from 'node:crypto';
import type { Kernel } from '../../kernel/index.js';
import type { OwnerAnswer } from './upstream/client-requests.js';

/** How long an upstream's call waits for the owner on a URL elicitation. */
export const OWNER_WAIT_MS = 45_000;

export function anySignal(...signals: AbortSignal[]): AbortSignal {
  return AbortSignal.any(signals);
}

export async function askOwner(
  kernel: Kernel,
  rt: { name: string; scrub: (text: string) => string },
  connection: string,
  request: { url: string; message: string },
  signal: AbortSignal,
): Promise<OwnerAnswer> {
  const summary = rt.scrub(
    `${rt.name} asks you to open ${request.url}${request.message ? ` — “${request.message}”` : ''}. Approve once you have dealt with it there; deny to refuse.`,
  );
  const filed = await kernel.consent.request(connection, rt.name, {
    capability: `url-elicitation:${randomUUID()}`,
    summary,
    lifetimeMs: 60_000,
  });
  if ('ok' in filed && filed.code === 'approvalDenied') return 'decline';
  const id = 'ok' in filed ? (filed.data as { approvalID?: string } | undefined)?.approvalID : null;
  if (!id) return 'cancel';
  return new Promise<OwnerAnswer>((resolve) => {
    let done = false;
    const finish = (answer: OwnerAnswer) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      unsubscribe();
      resolve(answer);
    };
    const fromStatus = (status: unknown) =>
      status === 'approved'
        ? finish('accept')
        : status === 'denied'
          ? finish('decline')
          : undefined;
    const timer = setTimeout(() => finish('cancel'), OWNER_WAIT_MS);
    signal.addEventListener('abort', () => finish('cancel'), { once: true });
    const unsubscribe = kernel.events.subscribe(
      ({ data }) => {
        const approval = data.approval as { id?: unknown; status?: unknown } | undefined;
        if (data.event === 'approvalDecided' && approval?.id === id) fromStatus(approval.status);
      },
      { events: ['approvalDecided'] },
    );
    void kernel.store
      .read((tx) => tx.approvals.get(id))
      .then((a) => fromStatus(a?.status))
      .catch(() => undefined);
  });
}
