/**
 * The audit trail (spec/kernel.md §10): every agent action and refusal,
 * filterable by door, connection, result, the policy's decision and the
 * rule that made it (spec/authority.md §3), exportable as JSON lines.
 * New entries arrive live (`auditRecorded`). `#/audit?rule=<id>` (the
 * Policy screen links each rule's decisions) opens filtered.
 */
import type { AuditEntry } from '../../../kernel/records.js';
import { get, request, saveUrl } from '../api.js';
import { busy, fill, h, labelCells } from '../dom.js';
import { showError } from '../errors.js';
import { agentOfLabel, shortConnection, time } from '../format.js';
import { subscribe, live } from '../live.js';
import { decidedBy, isRuleId } from '../policy-text.js';
import { href } from '../router.js';
import type { Screen } from './screen.js';

const COLUMNS = [
  'Time',
  'Door',
  'Tool',
  'Connection',
  'Result',
  'Decision',
  'Rule',
  'Duration',
  'Provenance',
] as const;

interface Filters {
  door: string;
  connection: string;
  result: string;
  /** `allow`, `ask` or `deny`; empty for any. */
  decision?: string;
  /** A rule id, `readOnly` or `default:<effect>`; empty for any. */
  rule?: string;
  /** An agent's name: every connection of that agent (the Agents screen links it). */
  agent?: string;
}

/** Whether an entry passes the filters; result `error` matches every refusal or failure. */
export function matches(e: AuditEntry, f: Filters): boolean {
  if (f.door && e.door !== f.door) return false;
  if (f.connection && e.connection !== f.connection) return false;
  if (f.decision && e.decision !== f.decision) return false;
  if (f.rule && e.rule !== f.rule) return false;
  if (f.agent && agentOfLabel(e.connection) !== f.agent) return false;
  if (f.result === 'ok') return e.result === 'ok';
  if (f.result === 'error') return e.result !== 'ok';
  return !f.result || e.result === f.result;
}

function options(
  select: HTMLSelectElement,
  all: string,
  values: string[],
  label = (v: string) => v,
) {
  const current = select.value;
  fill(
    select,
    h('option', { value: '' }, all),
    ...values.map((v) => h('option', { value: v }, label(v))),
  );
  select.value = values.includes(current) ? current : '';
}

/** One entry's row in the table. */
function auditRow(e: AuditEntry) {
  return labelCells(
    h(
      'tr',
      // Every agent's calls: kept from the agents driving the page.
      { 'data-audit-id': e.id, 'data-wu-private': true },
      h('td', {}, time(e.at)),
      h('td', {}, e.door),
      h('td', { class: 'code' }, e.tool),
      h('td', { title: e.connection }, shortConnection(e.connection)),
      h('td', { class: e.result === 'ok' ? 'result-ok' : 'result-err' }, e.result),
      h(
        'td',
        {},
        e.decision ? h('strong', { class: `decision decision-${e.decision}` }, e.decision) : '—',
      ),
      h(
        'td',
        { class: 'code' },
        isRuleId(e.rule)
          ? h('a', { href: href('policy', e.rule), title: 'This rule in the policy' }, e.rule)
          : e.rule
            ? decidedBy(e.rule)
            : '—',
      ),
      h('td', {}, `${e.durationMs} ms`),
      h(
        'td',
        {},
        e.provenance
          ? `${e.provenance.provider} / ${e.provenance.model} / ${e.provenance.promptVersion}`
          : '—',
      ),
    ),
    COLUMNS,
  );
}

/** The entries the filters pass, as JSON lines from the server, saved as `audit.jsonl`. */
async function exportFiltered(f: Filters): Promise<void> {
  const query = new URLSearchParams({ format: 'jsonl', limit: '10000' });
  for (const key of ['door', 'decision', 'rule'] as const) if (f[key]) query.set(key, f[key]);
  const res = await request('GET', `audit?${query}`);
  const lines = (await res.text())
    .split('\n')
    .filter((l) => l && matches(JSON.parse(l) as AuditEntry, f));
  const blob = new Blob(
    lines.map((l) => l + '\n'),
    { type: 'application/x-ndjson' },
  );
  saveUrl(URL.createObjectURL(blob), 'audit.jsonl');
}

/** The filter menus offer what the entries hold, keeping each current choice. */
function refreshChoices(
  selects: Record<'door' | 'connection' | 'result' | 'rule', HTMLSelectElement>,
  entries: AuditEntry[],
  f: Filters,
): void {
  const { door, connection, result, rule } = selects;
  options(door, 'All doors', [...new Set(entries.map((e) => e.door))].sort());
  options(
    connection,
    'All connections',
    [...new Set(entries.map((e) => e.connection))].sort(),
    shortConnection,
  );
  const codes = [...new Set(entries.map((e) => e.result))].filter((r) => r !== 'ok').sort();
  const currentResult = result.value || f.result;
  fill(
    result,
    h('option', { value: '' }, 'All results'),
    h('option', { value: 'ok' }, 'ok'),
    h('option', { value: 'error' }, 'Any refusal or error'),
    ...codes.map((c) => h('option', { value: c }, c)),
  );
  result.value = currentResult;
  const rules = [...new Set(entries.flatMap((e) => (e.rule ? [e.rule] : [])))].sort();
  if (f.rule && !rules.includes(f.rule)) rules.push(f.rule);
  options(rule, 'All rules', rules, (r) => decidedBy(r));
  rule.value = f.rule ?? '';
  door.value = f.door;
  connection.value = f.connection;
}

export const auditScreen: Screen = (root, route) => {
  let entries: AuditEntry[] = [];
  const agent = route.query.get('agent') ?? '';
  const door = h('select', { id: 'audit-door', name: 'door' });
  const connection = h('select', { id: 'audit-connection', name: 'connection' });
  const result = h('select', { id: 'audit-result', name: 'result' });
  const decision = h(
    'select',
    { id: 'audit-decision', name: 'decision' },
    h('option', { value: '' }, 'All decisions'),
    ...['allow', 'ask', 'deny'].map((d) => h('option', { value: d }, d)),
  );
  const rule = h('select', { id: 'audit-rule', name: 'rule' });
  const body = h('tbody', { id: 'audit-rows' });
  const count = h('p', { class: 'meta', role: 'status' });
  const exportButton = h('button', { type: 'button' }, 'Export JSON lines');
  const filters = (): Filters => ({
    door: door.value,
    connection: connection.value,
    result: result.value,
    decision: decision.value,
    rule: rule.value,
    agent,
  });

  const render = () => {
    const f = filters();
    refreshChoices({ door, connection, result, rule }, entries, f);
    const shown = entries
      .filter((e) => matches(e, filters()))
      .slice()
      .reverse();
    count.textContent = `${shown.length} of ${entries.length} entries`;
    fill(body, ...shown.map((e) => auditRow(e)));
  };

  const load = async () => {
    try {
      entries = (await get<{ entries: AuditEntry[] }>('audit?limit=10000')).entries;
    } catch (e) {
      showError(e, 'Could not load the audit trail');
    }
    render();
  };

  for (const [select, key] of [
    [door, 'door'],
    [connection, 'connection'],
    [result, 'result'],
    [decision, 'decision'],
    [rule, 'rule'],
  ] as const) {
    select.addEventListener('change', render);
    const wanted = route.query.get(key);
    if (wanted) {
      if (!Array.from(select.options).some((o) => o.value === wanted))
        select.append(h('option', { value: wanted }, wanted));
      select.value = wanted;
    }
  }

  exportButton.addEventListener(
    'click',
    () =>
      void busy(exportButton, async () => {
        try {
          await exportFiltered(filters());
        } catch (e) {
          showError(e, 'Export failed');
        }
      }),
  );

  fill(
    root,
    h('h1', { tabindex: '-1' }, 'Audit'),
    h(
      'form',
      {
        class: 'row',
        role: 'search',
        'aria-label': 'Filter the audit trail',
        onsubmit: (e: Event) => e.preventDefault(),
      },
      h('label', { for: 'audit-door' }, 'Door', door),
      h('label', { for: 'audit-connection' }, 'Connection', connection),
      h('label', { for: 'audit-result' }, 'Result', result),
      h('label', { for: 'audit-decision' }, 'Decision', decision),
      h('label', { for: 'audit-rule' }, 'Rule', rule),
      exportButton,
    ),
    agent
      ? h(
          'p',
          { class: 'meta', 'data-agent-filter': agent },
          `Only the calls of agent ${agent}. `,
          h('a', { href: href('audit') }, 'Show every agent'),
        )
      : null,
    count,
    h(
      'div',
      { class: 'table-wrap' },
      h(
        'table',
        { class: 'stack', 'aria-label': 'Audit entries, newest first' },
        h('thead', {}, h('tr', {}, ...COLUMNS.map((t) => h('th', { scope: 'col' }, t)))),
        body,
      ),
    ),
  );
  void load();
  return subscribe('event', () => {
    const e = live().lastEvent;
    if (e?.event === 'auditRecorded' && e.entry && typeof e.entry === 'object') {
      entries.push(e.entry as AuditEntry);
      render();
    } else if (e?.event === 'snapshot') void load();
  });
};
