/**
 * The approvals inbox (spec/authority.md §2–3): pending requests appear
 * live — consent requests (the notes door's "native window", spec/notes.md;
 * consent-card.ts) and the owner's policy asks (policy-ask-card.ts). Below,
 * active grants count down and can be revoked. `#/approvals/<id>` (the link
 * a URL-mode elicitation opens) brings that request into view. Identical
 * requests of one agent share a card with a count (inbox-groups.ts); each
 * card says how long ago it was asked, kept current.
 */
import type { Grant } from '../../../../kernel/records.js';
import { del } from '../../api.js';
import { busy, fill, h, keyed, labelCells, onOwner } from '../../dom.js';
import { remaining, shortConnection } from '../../format.js';
import { live, refreshConsent, subscribe } from '../../live.js';
import { groupApprovals, type ApprovalGroup } from '../../inbox-groups.js';
import { grantCapabilityText } from '../../policy-text.js';
import { showAsked } from './approval-decide.js';
import { consentCard } from './consent-card.js';
import { policyAskCard } from './policy-ask-card.js';
import type { Screen } from '../screen.js';

/** The card of a group of identical requests: the newest one's, deciding all of them. */
function groupCard(g: ApprovalGroup, focusNext: (from: HTMLElement) => void): HTMLElement {
  const a = g.latest;
  let card: HTMLElement | null = null;
  const ids = () => (card?.dataset.approvalIds ?? a.id).split(' ');
  card = a.kind === 'policy' ? policyAskCard(a, focusNext, ids) : consentCard(a, focusNext, ids);
  updateGroupCard(card, g);
  return card;
}

/** Keeps a card in step with its group: the newest id and connection, the count, the age. */
function updateGroupCard(card: HTMLElement, g: ApprovalGroup): void {
  card.dataset.approvalId = g.latest.id;
  card.dataset.approvalIds = g.ids.join(' ');
  card.dataset.count = String(g.ids.length);
  const connection = card.querySelector<HTMLElement>('.connection');
  if (connection) {
    connection.title = g.latest.connection;
    connection.textContent = shortConnection(g.latest.connection);
  }
  const asked = card.querySelector<HTMLElement>('.asked');
  if (asked) {
    asked.dataset.first = String(g.firstAt);
    asked.dataset.count = String(g.ids.length);
    showAsked(asked);
  }
}

function grantRow(g: Grant): HTMLElement {
  const left = h(
    'span',
    { class: 'remaining', 'data-expires': g.expiresAt },
    remaining(g.expiresAt - Date.now()),
  );
  const revoke = h(
    'button',
    {
      type: 'button',
      class: 'danger',
      'aria-label': `Revoke ${g.door} ${g.capability} grant${g.resource ? ` for ${g.resource.name}` : ''}`,
    },
    'Revoke',
  );
  const problem = h('span', { class: 'result-err', role: 'alert' });
  onOwner(
    revoke,
    'click',
    () =>
      void busy(revoke, async () => {
        try {
          await del(`grants/${encodeURIComponent(g.id)}`);
          await refreshConsent();
        } catch (e) {
          problem.textContent = (e as Error).message;
        }
      }),
  );
  // Grants name no agent by itself: kept from every agent driving the page.
  return labelCells(
    h(
      'tr',
      { 'data-grant-id': g.id, 'data-wu-private': true },
      h('td', {}, g.door),
      h('td', {}, grantCapabilityText(g.capability)),
      h('td', {}, g.resource?.name ?? '—'),
      h('td', { title: g.connection }, shortConnection(g.connection)),
      h('td', {}, left),
      h('td', {}, revoke, problem),
    ),
    GRANT_COLUMNS,
  );
}

const GRANT_COLUMNS = ['Door', 'Capability', 'Resource', 'Connection', 'Time left', ''] as const;

export const approvalsScreen: Screen = (root, route) => {
  const wanted = route.params[0] ?? null;
  const notice = h('p', { class: 'meta', role: 'status', id: 'wanted-approval' });
  const pendingList = h('ul', { class: 'cards', id: 'pending' });
  const pendingEmpty = h(
    'p',
    { class: 'empty' },
    'No pending requests. New ones appear here as agents ask.',
  );
  const grantBody = h('tbody', { id: 'grants' });
  const grantsEmpty = h('p', { class: 'empty' }, 'No active grants.');
  const grantTable = h('div', { class: 'table-wrap' });
  const pendingHeading = h('h2', { id: 'pending-title', tabindex: '-1' }, 'Pending requests');
  fill(
    root,
    h('h1', { tabindex: '-1' }, 'Approvals'),
    h(
      'section',
      { 'aria-labelledby': 'pending-title' },
      pendingHeading,
      notice,
      pendingEmpty,
      pendingList,
    ),
    h(
      'section',
      { 'aria-labelledby': 'grants-title' },
      h('h2', { id: 'grants-title' }, 'Active grants'),
      grantsEmpty,
      grantTable,
    ),
  );

  grantTable.append(
    h(
      'table',
      { class: 'stack', 'aria-labelledby': 'grants-title' },
      h('thead', {}, h('tr', {}, ...GRANT_COLUMNS.map((t) => h('th', { scope: 'col' }, t)))),
      grantBody,
    ),
  );

  // After a decision, keyboard focus moves to the next request (or the heading), not to nowhere.
  const focusNext = (from: HTMLElement) => {
    const next = (from.nextElementSibling ?? from.previousElementSibling) as HTMLElement | null;
    const target = next?.querySelector<HTMLElement>('select, input, button') ?? pendingHeading;
    queueMicrotask(() => target.focus());
  };

  const renderPending = () => {
    const groups = groupApprovals(live().approvals);
    pendingEmpty.hidden = groups.length > 0;
    keyed(
      pendingList,
      groups,
      (g) => g.key,
      (g) => groupCard(g, focusNext),
      updateGroupCard,
    );
    showWanted();
  };

  // The request a link named: highlighted once it is listed; said so when it is no longer pending.
  let loaded = false;
  let shown = false;
  const showWanted = () => {
    if (!wanted) return;
    const card = Array.from(pendingList.children).find(
      (c): c is HTMLElement =>
        c instanceof HTMLElement && (c.dataset.approvalIds ?? '').split(' ').includes(wanted),
    );
    for (const c of pendingList.querySelectorAll('.highlight')) c.classList.remove('highlight');
    if (card) {
      card.classList.add('highlight');
      notice.textContent = 'The request the link points at is highlighted below.';
      if (!shown) {
        shown = true;
        card.scrollIntoView({ block: 'center' });
      }
    } else if (loaded)
      notice.textContent = shown
        ? 'The request the link pointed at was decided.'
        : `Request ${wanted} is no longer pending: it was decided, expired or cancelled.`;
  };
  const renderGrants = () => {
    const now = Date.now();
    const grants = live().grants.filter((g) => g.expiresAt > now && g.revokedAt === null);
    grantsEmpty.hidden = grants.length > 0;
    grantTable.hidden = grants.length === 0;
    keyed(grantBody, grants, (g) => g.id, grantRow);
  };
  renderPending();
  renderGrants();
  if (wanted)
    void refreshConsent().then(() => {
      loaded = true;
      showWanted();
    });
  const offA = subscribe('approvals', renderPending);
  const offG = subscribe('grants', renderGrants);
  const tick = setInterval(() => {
    for (const el of grantBody.querySelectorAll<HTMLElement>('.remaining'))
      el.textContent = remaining(Number(el.dataset.expires) - Date.now());
    for (const el of pendingList.querySelectorAll<HTMLElement>('.asked')) showAsked(el);
    if (live().grants.some((g) => g.expiresAt <= Date.now())) renderGrants();
  }, 1000);
  return () => {
    offA();
    offG();
    clearInterval(tick);
  };
};
