/**
 * A consent request in the inbox (the notes door's "native window",
 * spec/notes.md): the owner picks the resource the grant covers (a notes
 * project) and approves, or denies.
 */
import type { Approval } from '../../../../kernel/records.js';
import { get, post } from '../../api.js';
import { fill, forAgent, h, markOwner } from '../../dom.js';
import { remaining, shortConnection } from '../../format.js';
import { askedSpan, decider } from './approval-decide.js';

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

export function consentCard(
  a: Approval,
  focusNext: (from: HTMLElement) => void,
  ids: () => readonly string[] = () => [a.id],
): HTMLElement {
  const headingId = `approval-${a.id}-title`;
  const picker = resourcePicker(a);
  const problem = h('p', { class: 'result-err', role: 'alert' });
  const decide = decider(ids, problem, () => focusNext(card));
  const approve = h('button', { type: 'button', class: 'primary' }, 'Approve');
  const deny = h('button', { type: 'button', class: 'danger' }, 'Deny');
  decide(approve, 'approve', async () => {
    const resource = await picker.value();
    if (a.door === 'notes' && !resource) return 'Choose the project this grant covers first.';
    return resource ? { resource } : {};
  });
  decide(deny, 'deny', async () => ({}));
  markOwner(picker.control);
  const client = clientOf(a);
  const card = forAgent(
    h(
      'li',
      {
        class: 'card approval',
        'aria-labelledby': headingId,
        'data-approval-id': a.id,
        'data-kind': 'consent',
      },
      h('h3', { id: headingId }, `${a.door}: ${a.capability} access`),
      a.summary === `${a.door}: ${a.capability} access`
        ? null
        : h('p', { class: 'meta' }, a.summary),
      h(
        'p',
        { class: 'meta' },
        client ? `Client ${client} · ` : '',
        'Connection ',
        h('span', { title: a.connection, class: 'connection' }, shortConnection(a.connection)),
        ' · ',
        askedSpan(a.createdAt),
        ` · grant lasts ${remaining(a.lifetimeMs)}`,
      ),
      h('div', { class: 'row' }, picker.control, approve, deny),
      problem,
    ),
    a.agent,
  );
  return card;
}
