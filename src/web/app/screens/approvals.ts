/**
 * The approvals inbox (the notes door's "native window", spec/notes.md):
 * pending requests appear live; the owner picks the resource (a notes
 * project) and approves, or denies. Below, active grants count down and can
 * be revoked.
 */
import type { Approval, Grant } from '../../../kernel/records.js';
import { ApiError, del, get, post } from '../api.js';
import { busy, fill, h, keyed, labelCells } from '../dom.js';
import { remaining, shortConnection, time } from '../format.js';
import { live, refreshConsent, subscribe } from '../live.js';
import type { Screen } from './screen.js';

interface ProjectOption {
  id: string;
  name: string;
}

/** Notes projects, for the picker; the notes door names them `projectID`. */
async function notesProjects(): Promise<ProjectOption[]> {
  const body = await get<unknown>('notes/projects');
  const list = Array.isArray(body) ? body : ((body as { projects?: unknown[] }).projects ?? []);
  return list.flatMap((p) => {
    const r = p as Record<string, unknown>;
    const id = r.projectID ?? r.id;
    return typeof id === 'string' ? [{ id, name: typeof r.name === 'string' ? r.name : id }] : [];
  });
}

function clientOf(a: Approval): string | null {
  const c = (a as Approval & { client?: { name?: string; version?: string } | string }).client;
  if (!c) return null;
  if (typeof c === 'string') return c;
  return c.name ? `${c.name}${c.version ? ` ${c.version}` : ''}` : null;
}

const NEW_PROJECT = '__new__';

/**
 * What the grant covers. Notes requests pick one of the notes projects (or
 * name a new one, created on approval, so a first request on an empty
 * workspace needs no detour); other doors take an optional free-text name.
 */
function resourcePicker(a: Approval): {
  control: HTMLElement;
  value: () => Promise<string | undefined>;
} {
  const id = `resource-${a.id}`;
  if (a.door === 'notes') {
    const select = h(
      'select',
      { id, name: 'resource', required: true },
      h('option', { value: '' }, 'Loading projects…'),
    );
    const name = h('input', {
      id: `${id}-new`,
      name: 'new-project',
      type: 'text',
      autocomplete: 'off',
      maxlength: 200,
    });
    const newLabel = h('label', { for: `${id}-new` }, 'New project name', name);
    newLabel.hidden = true;
    select.addEventListener('change', () => {
      newLabel.hidden = select.value !== NEW_PROJECT;
      if (!newLabel.hidden) name.focus();
    });
    const load = async () => {
      try {
        const projects = await notesProjects();
        fill(
          select,
          h('option', { value: '' }, projects.length ? 'Choose a project…' : 'No projects yet'),
          ...projects.map((p) => h('option', { value: p.id }, p.name)),
          h('option', { value: NEW_PROJECT }, 'New project…'),
        );
        if (projects.length === 1) select.value = projects[0]!.id;
      } catch (e) {
        fill(select, h('option', { value: '' }, `Projects unavailable (${(e as Error).message})`));
      }
    };
    void load();
    return {
      control: h(
        'div',
        { class: 'row' },
        h('label', { for: id }, 'Project the grant covers', select),
        newLabel,
      ),
      async value() {
        if (select.value !== NEW_PROJECT) return select.value || undefined;
        const wanted = name.value.trim();
        if (!wanted) return undefined;
        return (await post<{ projectID: string }>('notes/projects', { name: wanted })).projectID;
      },
    };
  }
  const input = h('input', {
    id,
    name: 'resource',
    type: 'text',
    autocomplete: 'off',
    placeholder: 'e.g. a project name',
  });
  return {
    control: h('label', { for: id }, 'Project or resource (optional)', input),
    value: async () => input.value.trim() || undefined,
  };
}

function approvalCard(a: Approval, focusNext: (from: HTMLElement) => void): HTMLElement {
  const headingId = `approval-${a.id}-title`;
  const picker = resourcePicker(a);
  const problem = h('p', { class: 'result-err', role: 'alert' });
  const decide = async (
    button: HTMLButtonElement,
    action: 'approve' | 'deny',
    trusted: boolean,
  ) => {
    problem.textContent = '';
    // A click the page bridge synthesises for an agent is untrusted: an agent must never approve itself.
    if (action === 'approve' && !trusted) {
      problem.textContent = 'Approving needs your own click or key press.';
      return;
    }
    await busy(button, async () => {
      try {
        const resource = action === 'approve' ? await picker.value() : undefined;
        if (action === 'approve' && a.door === 'notes' && !resource) {
          problem.textContent = 'Choose the project this grant covers first.';
          return;
        }
        await post(
          `approvals/${encodeURIComponent(a.id)}/${action}`,
          action === 'approve' ? (resource ? { resource } : {}) : undefined,
        );
        focusNext(card);
        await refreshConsent();
      } catch (e) {
        problem.textContent = e instanceof ApiError || e instanceof Error ? e.message : String(e);
      }
    });
  };
  const approve = h('button', { type: 'button', class: 'primary' }, 'Approve');
  const deny = h('button', { type: 'button', class: 'danger' }, 'Deny');
  approve.addEventListener('click', (e) => void decide(approve, 'approve', e.isTrusted));
  deny.addEventListener('click', (e) => void decide(deny, 'deny', e.isTrusted));
  const client = clientOf(a);
  const card = h(
    'li',
    { class: 'card approval', 'aria-labelledby': headingId, 'data-approval-id': a.id },
    h('h3', { id: headingId }, `${a.door}: ${a.capability} access`),
    a.summary === `${a.door}: ${a.capability} access` ? null : h('p', { class: 'meta' }, a.summary),
    h(
      'p',
      { class: 'meta' },
      client ? `Client ${client} · ` : '',
      'Connection ',
      h('span', { title: a.connection, class: 'connection' }, shortConnection(a.connection)),
      ` · asked ${time(a.createdAt)} · grant lasts ${remaining(a.lifetimeMs)}`,
    ),
    h('div', { class: 'row' }, picker.control, approve, deny),
    problem,
  );
  return card;
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
  revoke.addEventListener(
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
  return labelCells(
    h(
      'tr',
      { 'data-grant-id': g.id },
      h('td', {}, g.door),
      h('td', {}, g.capability),
      h('td', {}, g.resource?.name ?? '—'),
      h('td', { title: g.connection }, shortConnection(g.connection)),
      h('td', {}, left),
      h('td', {}, revoke, problem),
    ),
    GRANT_COLUMNS,
  );
}

const GRANT_COLUMNS = ['Door', 'Capability', 'Resource', 'Connection', 'Time left', ''] as const;

export const approvalsScreen: Screen = (root) => {
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
    h('section', { 'aria-labelledby': 'pending-title' }, pendingHeading, pendingEmpty, pendingList),
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
    const { approvals } = live();
    pendingEmpty.hidden = approvals.length > 0;
    keyed(
      pendingList,
      approvals,
      (a) => a.id,
      (a) => approvalCard(a, focusNext),
    );
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
  const offA = subscribe('approvals', renderPending);
  const offG = subscribe('grants', renderGrants);
  const tick = setInterval(() => {
    for (const el of grantBody.querySelectorAll<HTMLElement>('.remaining'))
      el.textContent = remaining(Number(el.dataset.expires) - Date.now());
    if (live().grants.some((g) => g.expiresAt <= Date.now())) renderGrants();
  }, 1000);
  return () => {
    offA();
    offG();
    clearInterval(tick);
  };
};
