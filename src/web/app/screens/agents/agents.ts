/**
 * The owner's agents (issue 27; spec/authority.md §1): add one (its token
 * and client configurations are shown once, agent-config.ts), revoke one (its
 * token stops working, its asks are cancelled, its grants and open MCP
 * sessions end), and for each: when it was last seen, its calls today by
 * effect and outcome (`GET /api/v1/agents/activity`, from the audit), its
 * pending asks, the rules that name it, its last calls, and a link to the
 * audit filtered to it. Agents are not renamed (the kernel keeps a name with
 * everything it was granted): revoke and add under the new name.
 * Everything here is the owner's: private to the page bridge.
 */
import type { AgentInfo } from '../../../../kernel/authority/principals.js';
import type { ListedRule } from '../../../../kernel/authority/policy.js';
import type { AgentActivity } from '../../../../transport/rest/rest-agent-activity.js';
import { del, get, post } from '../../api.js';
import { busy, field, fill, forAgent, h, onOwner } from '../../dom.js';
import { showError } from '../../errors.js';
import { form as withSubmit, refuse } from '../../form.js';
import { time } from '../../format.js';
import { live, subscribe } from '../../live.js';
import { matchText } from '../../policy-text.js';
import { href } from '../../router.js';
import { newAgentPanel } from './agent-config.js';
import type { Screen } from '../screen.js';

const REFRESH_MS = 10_000;

/** The OAuth client an agent was made for (authority.md §7). */
interface OAuthClientOf {
  clientId: string;
  clientName: string;
  connectedAt: number;
  tokens: number;
}

interface Loaded {
  agents: AgentInfo[];
  oauth: Record<string, OAuthClientOf>;
  activity: Map<string, AgentActivity>;
  rules: ListedRule[];
}

/** A rule's agent glob (`*` any run, `?` one character), as the policy matches it. */
export function globMatches(pattern: string, value: string): boolean {
  const body = pattern
    .split('')
    .map((c) => (c === '*' ? '.*' : c === '?' ? '.' : c.replace(/[\\^$.|+()[\]{}]/g, '\\$&')))
    .join('');
  return new RegExp(`^${body}$`, 's').test(value);
}

/** The name in an agent key (`alice~3f9a…` → `alice`). */
export const nameOfKey = (key: string): string => decodeURIComponent(key.split('~')[0] ?? key);

const counts = (record: Record<string, number>) =>
  Object.entries(record)
    .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
    .map(([k, n]) => `${n} ${k}`)
    .join(', ') || 'none';

function activityPart(a: AgentActivity | undefined) {
  if (!a) return [h('p', { class: 'meta', 'data-last-seen': '' }, 'Not seen in the audit yet.')];
  return [
    h('p', { class: 'meta', 'data-last-seen': a.lastSeen ?? '' }, `Last seen ${time(a.lastSeen!)}`),
    h(
      'p',
      { 'data-today': a.today.calls },
      `Calls today: ${a.today.calls}`,
      a.today.calls
        ? ` — by effect: ${counts(a.today.byEffect)}; by outcome: ${counts(a.today.byOutcome)}`
        : '',
    ),
    a.lastCalls.length
      ? h(
          'table',
          { 'aria-label': `Last calls of ${a.agent}`, class: 'last-calls' },
          h(
            'thead',
            {},
            h(
              'tr',
              {},
              h('th', {}, 'Time'),
              h('th', {}, 'Door'),
              h('th', {}, 'Tool'),
              h('th', {}, 'Result'),
            ),
          ),
          h(
            'tbody',
            {},
            ...a.lastCalls.map((c) =>
              h(
                'tr',
                { 'data-audit-id': c.id },
                h('td', {}, time(c.at)),
                h('td', {}, c.door),
                h('td', { class: 'code' }, c.tool),
                h('td', {}, c.result),
              ),
            ),
          ),
        )
      : null,
  ];
}

function revokeControl(agent: AgentInfo, reload: () => Promise<void>) {
  const start = h('button', { type: 'button', class: 'danger' }, `Revoke ${agent.name}`);
  const confirm = h('button', { type: 'button', class: 'danger' }, 'Revoke now');
  const cancel = h('button', { type: 'button' }, 'Keep it');
  const question = h(
    'p',
    { role: 'group', 'aria-label': `Revoke ${agent.name}?` },
    `Revoke ${agent.name}? Its token stops working at once, its pending asks are cancelled, and its grants and open sessions end. `,
    confirm,
    ' ',
    cancel,
  );
  question.hidden = true;
  onOwner(start, 'click', () => {
    question.hidden = false;
    start.hidden = true;
    confirm.focus();
  });
  onOwner(cancel, 'click', () => {
    question.hidden = true;
    start.hidden = false;
  });
  onOwner(confirm, 'click', () =>
    busy(confirm, async () => {
      try {
        await del(`agents/${encodeURIComponent(agent.name)}`);
        question.hidden = true;
        await reload();
      } catch (e) {
        showError(e, `Could not revoke ${agent.name}`);
      }
    }),
  );
  return h('div', {}, start, question);
}

function agentCard(agent: AgentInfo, data: Loaded, reload: () => Promise<void>) {
  const rules = data.rules.filter((r) => r.agent && globMatches(r.agent, agent.name));
  const asks = live().approvals.filter((a) => a.agent && nameOfKey(a.agent) === agent.name);
  const revoked = agent.revokedAt !== null;
  return h(
    'li',
    { class: 'card', 'data-agent': agent.name, 'data-revoked': revoked },
    h(
      'h2',
      {},
      `${agent.name} `,
      revoked ? h('span', { class: 'state state-failed' }, 'revoked') : null,
    ),
    h(
      'p',
      { class: 'meta' },
      `Added ${time(agent.createdAt)}`,
      revoked ? ` · revoked ${time(agent.revokedAt!)}` : '',
      agent.id ? ` · id ${agent.id}` : '',
    ),
    data.oauth[agent.name]
      ? h(
          'p',
          { 'data-oauth-client': data.oauth[agent.name]!.clientId },
          `Connected by OAuth: ${data.oauth[agent.name]!.clientName} (${data.oauth[agent.name]!.clientId}), last ${time(data.oauth[agent.name]!.connectedAt)}; ${data.oauth[agent.name]!.tokens} token(s) still good. Revoking ends them at once.`,
        )
      : null,
    ...activityPart(data.activity.get(agent.name)),
    h(
      'p',
      { 'data-pending': asks.length },
      asks.length
        ? h(
            'a',
            { href: href('approvals') },
            `${asks.length} pending ask${asks.length === 1 ? '' : 's'}`,
          )
        : 'No pending asks.',
    ),
    rules.length
      ? h(
          'ul',
          { 'aria-label': `Rules naming ${agent.name}`, class: 'agent-rules' },
          ...rules.map((r) =>
            h('li', { 'data-rule': r.id }, `${r.decision}: ${matchText(r)} (rule ${r.id})`),
          ),
        )
      : h('p', { class: 'meta' }, 'No rule names it.'),
    h(
      'p',
      {},
      h(
        'a',
        { href: `${href('audit')}?agent=${encodeURIComponent(agent.name)}` },
        `Audit of ${agent.name}`,
      ),
    ),
    revoked ? null : revokeControl(agent, reload),
  );
}

export const agentsScreen: Screen = (root) => {
  const list = forAgent(h('ol', { class: 'cards', id: 'agents', 'aria-label': 'Agents' }), null);
  const empty = h('p', { class: 'empty' }, 'No agents yet: add one to connect an MCP client.');
  empty.hidden = true;
  const fresh = h('div', { id: 'new-agent' });
  const name = h('input', {
    name: 'name',
    required: true,
    maxlength: 64,
    pattern: '[a-z0-9][a-z0-9._\\-]*',
    autocomplete: 'off',
  });
  const add = h('button', { type: 'submit' }, 'Add agent');
  const form = h(
    'form',
    { class: 'row', 'aria-label': 'Add an agent' },
    field('Name (lowercase letters, digits, . - _)', name),
    ' ',
    add,
  );
  let data: Loaded = { agents: [], oauth: {}, activity: new Map(), rules: [] };
  let loads = 0;

  const render = () => {
    empty.hidden = data.agents.length > 0;
    // Newest first; revoked ones after the active ones.
    const agents = [...data.agents].sort(
      (a, b) =>
        Number(a.revokedAt !== null) - Number(b.revokedAt !== null) || b.createdAt - a.createdAt,
    );
    // Leave the list alone while the owner is answering a revoke question.
    if (list.querySelector('[role=group]:not([hidden])')) return;
    fill(list, ...agents.map((a) => agentCard(a, data, load)));
  };

  const load = async () => {
    const mine = ++loads;
    try {
      const [agents, activity, policy, oauth] = await Promise.all([
        get<{ agents: AgentInfo[] }>('agents'),
        get<{ activity: AgentActivity[] }>('agents/activity'),
        get<{ rules: ListedRule[] }>('policy'),
        // Absent when OAuth is off.
        get<{ agents: Record<string, OAuthClientOf> }>('oauth/agents').catch(() => ({
          agents: {},
        })),
      ]);
      if (mine !== loads) return;
      data = {
        agents: agents.agents,
        oauth: oauth.agents,
        activity: new Map(activity.activity.map((a) => [a.agent, a])),
        rules: policy.rules,
      };
      render();
    } catch (e) {
      showError(e, 'Could not load the agents');
    }
  };

  withSubmit(form, {
    button: add,
    read: () => name.value.trim() || refuse(),
    send: async (wanted) => {
      const made = await post<{ name: string; token: string }>('agents', { name: wanted });
      name.value = '';
      fill(
        fresh,
        newAgentPanel(made.name, made.token, () => fill(fresh)),
      );
      fresh.querySelector('h2')?.setAttribute('tabindex', '-1');
      fresh.querySelector<HTMLElement>('h2')?.focus();
      await load();
    },
    failed: (err, wanted) => showError(err, `Could not add ${wanted}`),
  });

  fill(
    root,
    h('h1', { tabindex: '-1' }, 'Agents'),
    h(
      'p',
      { class: 'meta' },
      'Each MCP client connects as an agent with its own token. Agents cannot be renamed: revoke one and add another under the new name.',
    ),
    form,
    fresh,
    empty,
    list,
  );
  void load();
  const timer = setInterval(() => void load(), REFRESH_MS);
  let soon: ReturnType<typeof setTimeout> | undefined;
  const unsubscribe = [
    subscribe('approvals', render),
    subscribe('event', () => {
      const e = live().lastEvent;
      if (e?.event !== 'auditRecorded' && e?.event !== 'snapshot') return;
      // A burst of calls reloads once.
      clearTimeout(soon);
      soon = setTimeout(() => void load(), 500);
    }),
  ];
  return () => {
    clearInterval(timer);
    clearTimeout(soon);
    for (const u of unsubscribe) u();
    // The token leaves the page with the screen.
    fill(fresh);
  };
};
