/**
 * One decision on a pending approval, shared by consent requests and policy
 * asks: approving or denying needs the owner's own click or key press (a
 * click the page bridge synthesises for an agent is untrusted, so an agent
 * can never decide a request), the button is busy meanwhile, a refusal is
 * shown on the card, and focus moves on once the request left the inbox.
 */
import { post } from '../api.js';
import { busy, onOwner } from '../dom.js';
import { refreshConsent } from '../live.js';

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

export function decider(id: string, problem: HTMLElement, decided: () => void): Decide {
  const run = async (button: HTMLButtonElement, action: string, body: DecisionBody) => {
    problem.textContent = '';
    await busy(button, async () => {
      try {
        const sent = await body();
        if (typeof sent === 'string') {
          problem.textContent = sent;
          return;
        }
        await post(`approvals/${encodeURIComponent(id)}/${action}`, sent);
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
