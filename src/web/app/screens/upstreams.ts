/**
 * The mcp door's upstreams (spec/gateway.md): each existing MCP server
 * Airlock fronts, its state (running, restarting, failed — with the last
 * lines it wrote to stderr), and its tools with the effect Airlock assumes.
 * Annotations are the upstream's claim; the owner overrides an effect here
 * (`PUT /api/v1/upstreams/{name}/tools/{tool}/effect`), and the policy then
 * treats the tool accordingly. Pinning: each tool says whether its
 * definition is the one the owner reviewed, what changed since (added
 * description words marked), any flags, and "Pin as shown"
 * (`POST …/review` with the digest shown). Writes left uncertain by an
 * upstream that stopped mid-call are listed. Refreshed every few seconds and whenever a
 * tool list changes.
 */
import { ApiError, get, post, put } from '../api.js';
import { fill, h, onOwner } from '../dom.js';
import { showError } from '../errors.js';
import { live, subscribe } from '../live.js';
import type { Screen } from './screen.js';

type Effect = 'read' | 'write' | 'destructive';

interface Diff {
  new: boolean;
  changed?: string[];
  addedWords?: string[];
}

interface ToolView {
  name: string;
  upstreamTool: string;
  effect: Effect;
  source: 'override' | 'annotations' | 'unreviewed';
  annotated: Effect;
  /** Pinning (trust "pin"): absent when the upstream's annotations are trusted. */
  review?: 'reviewed' | 'unreviewed';
  flags?: string[];
  diff?: Diff;
  digest?: string;
  reviewedAt?: number;
}

interface UncertainWrite {
  tool: string;
  operationId: string;
  connection: string;
  at: number;
}

/** An OAuth upstream's grant as the owner sees it (never a token). */
interface AuthorizationView {
  kind: 'oauth';
  status: 'notConnected' | 'connected' | 'reconnect';
  reason: string | null;
  issuer: string | null;
  scope: string | null;
  expiresAt: number | null;
  connectedAt: number | null;
}

interface UpstreamView {
  authorization?: AuthorizationView;
  name: string;
  transport: 'stdio' | 'http';
  target: string;
  state: string;
  pid: number | null;
  restarts: number;
  lastError: string | null;
  stderr: string[];
  tools: ToolView[];
  uncertainWrites?: UncertainWrite[];
}

const EFFECTS: Effect[] = ['read', 'write', 'destructive'];
const REFRESH_MS = 5_000;

function effectSelect(u: UpstreamView, t: ToolView, reload: () => Promise<void>) {
  const select = h(
    'select',
    { 'aria-label': `Effect of ${t.name}`, 'data-tool': t.upstreamTool },
    h('option', { value: '' }, `as annotated (${t.annotated})`),
    ...EFFECTS.map((e) => h('option', { value: e }, e)),
  );
  select.value = t.source === 'override' ? t.effect : '';
  onOwner(
    select,
    'change',
    () => {
      select.disabled = true;
      const effect = select.value === '' ? null : select.value;
      void put(
        `upstreams/${encodeURIComponent(u.name)}/tools/${encodeURIComponent(t.upstreamTool)}/effect`,
        { effect },
      )
        .then(reload)
        .catch((e: unknown) => showError(e, `Could not change the effect of ${t.name}`))
        .finally(() => (select.disabled = false));
    },
    () => (select.value = t.source === 'override' ? t.effect : ''),
  );
  return select;
}

/**
 * An OAuth upstream's connection: its state and a Connect / Reconnect
 * button that sends this tab to the upstream's authorization server (it
 * comes back to `/upstream-oauth/callback`, which finishes the connect).
 */
function authorizationPart(u: UpstreamView, a: AuthorizationView) {
  const label = a.status === 'notConnected' ? 'Connect' : 'Reconnect';
  const button = h(
    'button',
    { type: 'button', 'data-connect': u.name, class: a.status === 'connected' ? '' : 'primary' },
    label,
  );
  onOwner(button, 'click', () => {
    button.disabled = true;
    void post<{ authorizationUrl: string }>(`upstreams/${encodeURIComponent(u.name)}/connect`, {})
      .then(({ authorizationUrl }) => {
        const target = new URL(authorizationUrl);
        if (target.protocol !== 'https:' && target.protocol !== 'http:')
          throw new Error(
            `the authorization server's address is not a web address: ${target.href}`,
          );
        location.assign(target.href);
      })
      .catch((e: unknown) => {
        button.disabled = false;
        showError(e, `Could not start connecting ${u.name}`);
      });
  });
  const status =
    a.status === 'connected'
      ? `Connected to ${a.issuer ?? 'its authorization server'}${a.scope ? ` (scope ${a.scope})` : ''}.`
      : a.status === 'reconnect'
        ? `Needs reconnecting: ${a.reason ?? 'its authorization ended'}. Agents’ calls to it are refused until you reconnect it.`
        : 'Not connected yet: it requires OAuth. Connect it once; Airlock keeps its tokens (encrypted) and refreshes them.';
  return h(
    'div',
    { class: 'authorization', 'data-authorization': a.status },
    h('p', { class: a.status === 'connected' ? 'meta' : 'needs', role: 'status' }, status),
    button,
  );
}

const FIELD_NAMES: Record<string, string> = {
  description: 'description',
  title: 'title',
  inputSchema: 'parameters',
  outputSchema: 'result shape',
  annotations: 'annotations',
};

/** What changed in a tool's definition since the owner pinned it, the added words marked. */
function changes(t: ToolView) {
  const diff = t.diff;
  if (!diff) return null;
  if (diff.new) return h('p', { class: 'meta' }, 'New since your review.');
  const fields = (diff.changed ?? []).map((f) => FIELD_NAMES[f] ?? f).join(', ');
  return h(
    'p',
    { class: 'meta' },
    `Changed since your review: ${fields || 'its definition'}.`,
    diff.addedWords?.length
      ? h(
          'span',
          { class: 'added-words' },
          ' Words added to the description: ',
          ...diff.addedWords.flatMap((w, i) => [i ? ' ' : '', h('mark', {}, w)]),
        )
      : '',
  );
}

/** Pinned or not, what changed, and the owner's "pin as shown". */
function pinCell(u: UpstreamView, t: ToolView, reload: () => Promise<void>) {
  const flags = t.flags?.length
    ? h('p', { class: 'flags', role: 'note' }, `Flagged: ${t.flags.join(', ')}.`)
    : null;
  if (!t.review) return h('td', {}, 'not pinned (annotations trusted)', flags);
  if (t.review === 'reviewed')
    return h(
      'td',
      { 'data-pin': 'reviewed' },
      `pinned${t.reviewedAt ? ` ${new Date(t.reviewedAt).toLocaleString()}` : ''}`,
      t.digest ? h('span', { class: 'meta' }, ` · ${t.digest.slice(0, 12)}`) : '',
      flags,
    );
  const pin = h(
    'button',
    { type: 'button', 'aria-label': `Pin ${t.name} as shown` },
    'Pin as shown',
  );
  onOwner(pin, 'click', () => {
    pin.disabled = true;
    void post(
      `upstreams/${encodeURIComponent(u.name)}/tools/${encodeURIComponent(t.upstreamTool)}/review`,
      { digest: t.digest },
    )
      .then(reload)
      .catch((e: unknown) => showError(e, `Could not pin ${t.name}`))
      .finally(() => (pin.disabled = false));
  });
  return h(
    'td',
    { 'data-pin': 'unreviewed' },
    h('strong', {}, 'not reviewed: asks before every call'),
    changes(t),
    flags,
    pin,
  );
}

function uncertainList(u: UpstreamView) {
  const writes = u.uncertainWrites ?? [];
  if (!writes.length) return null;
  return h(
    'details',
    { open: true, class: 'uncertain' },
    h(
      'summary',
      {},
      `${writes.length} write${writes.length === 1 ? '' : 's'} may or may not have happened (the upstream stopped while ${writes.length === 1 ? 'it' : 'they'} ran)`,
    ),
    h(
      'ul',
      {},
      ...writes.map((w) =>
        h(
          'li',
          {},
          `${w.tool} · operation ${w.operationId} · ${w.connection} · ${new Date(w.at).toLocaleString()}`,
        ),
      ),
    ),
  );
}

function upstreamCard(u: UpstreamView, reload: () => Promise<void>) {
  return h(
    'li',
    { class: 'card', 'data-upstream': u.name },
    h('h3', {}, `${u.name} `, h('span', { class: `state state-${u.state}` }, u.state)),
    h(
      'p',
      { class: 'meta' },
      `${u.transport === 'stdio' ? 'spawned' : 'HTTP'}: ${u.target}`,
      u.pid ? ` · pid ${u.pid}` : '',
      ` · restarted ${u.restarts} time${u.restarts === 1 ? '' : 's'}`,
    ),
    u.authorization ? authorizationPart(u, u.authorization) : null,
    // An upstream waiting for the owner's (re)connect says why above.
    u.lastError && u.state !== 'unauthorized'
      ? h('p', { class: 'meta', role: 'note' }, `Last error: ${u.lastError}`)
      : null,
    u.stderr.length
      ? h(
          'details',
          { open: u.state === 'failed' },
          h(
            'summary',
            {},
            `Last ${u.stderr.length} stderr line${u.stderr.length === 1 ? '' : 's'}`,
          ),
          h('pre', { class: 'stderr' }, u.stderr.join('\n')),
        )
      : null,
    uncertainList(u),
    u.tools.length
      ? h(
          'table',
          { 'aria-label': `Tools of ${u.name}` },
          h(
            'thead',
            {},
            h(
              'tr',
              {},
              h('th', {}, 'Tool'),
              h('th', {}, 'Upstream name'),
              h('th', {}, 'Effect'),
              h('th', {}, 'Pinned'),
            ),
          ),
          h(
            'tbody',
            {},
            ...u.tools.map((t) =>
              h(
                'tr',
                { 'data-effect': t.effect },
                h('td', {}, t.name),
                h('td', {}, t.upstreamTool),
                h('td', {}, effectSelect(u, t, reload)),
                pinCell(u, t, reload),
              ),
            ),
          ),
        )
      : h('p', { class: 'empty' }, 'No tools listed yet.'),
  );
}

export const upstreamsScreen: Screen = (root) => {
  const list = h('ol', { class: 'cards', id: 'upstreams', 'aria-label': 'Upstreams' });
  const empty = h(
    'p',
    { class: 'empty' },
    'No upstream MCP servers. Start Airlock with --upstream NAME=COMMAND (or NAME=https://…/mcp) to put one behind it.',
  );
  empty.hidden = true;
  let loads = 0;

  const load = async () => {
    const mine = ++loads;
    let upstreams: UpstreamView[];
    try {
      upstreams = (await get<{ upstreams: UpstreamView[] }>('upstreams')).upstreams;
    } catch (e) {
      if (e instanceof ApiError && e.status === 404) upstreams = [];
      else {
        showError(e, 'Could not load the upstreams');
        return;
      }
    }
    if (mine !== loads) return;
    // Leave the list alone while the owner is choosing an effect.
    if (list.contains(document.activeElement) && document.activeElement?.tagName === 'SELECT')
      return;
    empty.hidden = upstreams.length > 0;
    fill(list, ...upstreams.map((u) => upstreamCard(u, load)));
  };

  fill(
    root,
    h('h1', { tabindex: '-1' }, 'Upstreams'),
    h(
      'p',
      { class: 'meta' },
      'Existing MCP servers behind Airlock. A tool’s effect decides how the policy treats it (by default read and write run, destructive asks you first). It comes from the upstream’s own annotations, which are only its claim: choose another effect to override it.',
    ),
    empty,
    list,
  );
  void load();
  const timer = setInterval(() => void load(), REFRESH_MS);
  const unsubscribe = subscribe('event', () => {
    const e = live().lastEvent;
    if (e?.event === 'toolsChanged' || e?.event === 'snapshot') void load();
  });
  return () => {
    clearInterval(timer);
    unsubscribe();
  };
};
