/**
 * One decision on a pending approval, shared by consent requests and policy
 * asks: approving or denying needs the owner's own click or key press (a
 * click the page bridge synthesises for an agent is untrusted, so an agent
 * can never decide a request), the button is busy meanwhile, a refusal is
 * shown on the card, and focus moves on once the request left the inbox.
 * A card may stand for several identical requests (inbox-groups.ts): the
 * decision goes to each of them.
 */
import { post } from '../../api.js';
import { busy, h, onOwner } from '../../dom.js';
import { time } from '../../format.js';
import { askedText } from '../../inbox-groups.js';
import { refreshConsent } from '../../live.js';

/**
 * "asked 4 min ago" (or "asked 3 times, first 12 min ago"), kept current by
 * the inbox (`showAsked`): the first ask's time and the count ride on the
 * element.
 */
export function askedSpan(createdAt: number): HTMLElement {
  const el = h('span', { class: 'asked', 'data-first': createdAt, 'data-count': 1 });
  showAsked(el);
  return el;
}

export function showAsked(el: HTMLElement, now = Date.now()): void {
  const first = Number(el.dataset.first);
  el.title = time(first);
  el.textContent = askedText(first, Number(el.dataset.count), now);
}

/**
 * What to send: the JSON body, or a sentence telling the owner what is
 * missing (nothing is sent then).
 */
export type DecisionBody = () => Promise<Record<string, unknown> | string>;

/** Makes `button` decide the request (`approve` or `deny`) on the owner's own click only. */
export type Decide = (
  button: HTMLButtonElement,
  action: 'approve' | 'deny',
  body: DecisionBody,
) => void;

export function decider(
  ids: () => readonly string[],
  problem: HTMLElement,
  decided: () => void,
): Decide {
  const run = async (button: HTMLButtonElement, action: string, body: DecisionBody) => {
    problem.textContent = '';
    await busy(button, async () => {
      try {
        const sent = await body();
        if (typeof sent === 'string') {
          problem.textContent = sent;
          return;
        }
        // Each identical request gets the decision; one decided meanwhile (or
        // cancelled with its connection) does not stop the others.
        const failed: unknown[] = [];
        for (const id of ids())
          await post(`approvals/${encodeURIComponent(id)}/${action}`, sent).catch((e: unknown) =>
            failed.push(e),
          );
        if (failed.length === ids().length) throw failed[0];
        decided();
        await refreshConsent();
      } catch (e) {
        problem.textContent = e instanceof Error ? e.message : String(e);
      }
    });
  };
  return (button, action, body) =>
    onOwner(
      button,
      'click',
      () => run(button, action, body),
      () => {
        problem.textContent = `${action === 'approve' ? 'Approving' : 'Denying'} needs your own click or key press.`;
      },
    );
}
