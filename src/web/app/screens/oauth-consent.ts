/**
 * The owner's consent to an MCP client connecting by OAuth (spec/authority.md
 * §7), at `/oauth/consent/<id>`: the authorization server sends the owner's
 * browser here. It shows who asks (the client's name, the hosts of its page,
 * logo and redirect, how it named itself), what it would reach (the doors,
 * and the resource), and asks for the agent it acts as and whether that
 * agent is read-only. Approve or Deny is the owner's own gesture (and
 * passkey where set up); the browser then goes on to the client.
 * Private to the page bridge: no agent reads or drives it.
 */
import { get, post } from '../api.js';
import { busy, field, fill, forAgent, h, markOwner, onOwner } from '../dom.js';
import { showError } from '../errors.js';
import type { Screen } from './screen.js';

export const CONSENT_PATH = '/oauth/consent/';

interface ConsentView {
  id: string;
  client: {
    id: string;
    name: string;
    uriHost: string | null;
    logoHost: string | null;
    redirectHost: string;
    identifiedBy: 'metadata document' | 'registration';
  };
  resource: string;
  doors: string[];
  agents: string[];
  suggestedAgent: string;
  expiresAt: number;
}

/** The waiting request's id when this page is a consent page, else null. */
export function consentIdOfPage(): string | null {
  if (!location.pathname.startsWith(CONSENT_PATH)) return null;
  return decodeURIComponent(location.pathname.slice(CONSENT_PATH.length)) || null;
}

const hostOfId = (id: string) => {
  try {
    return new URL(id).host;
  } catch {
    return null;
  }
};

function facts(v: ConsentView) {
  const row = (label: string, value: string, attr: string) =>
    [h('dt', {}, label), h('dd', { [attr]: value }, value)] as const;
  return h(
    'dl',
    { class: 'defaults' },
    ...row(
      'Identified by',
      v.client.identifiedBy === 'metadata document'
        ? `its metadata document at ${v.client.id}`
        : `registration (client ${v.client.id})`,
      'data-identified',
    ),
    ...(v.client.uriHost ? row('Its page', v.client.uriHost, 'data-uri-host') : []),
    ...(v.client.logoHost ? row('Its logo from', v.client.logoHost, 'data-logo-host') : []),
    ...row('Sends the answer to', v.client.redirectHost, 'data-redirect-host'),
    ...row('May reach', `${v.doors.join(', ')} (${v.resource})`, 'data-doors'),
    ...row('Waits until', new Date(v.expiresAt).toLocaleTimeString(), 'data-expires'),
  );
}

/**
 * What deserves a second look: a name any local program could claim, a
 * registered name nobody vouches for, an answer sent to another host than
 * the one the client named itself at.
 */
function warnings(v: ConsentView) {
  const idHost = hostOfId(v.client.id);
  const lines: string[] = [];
  if (v.client.id.startsWith('http://'))
    lines.push(
      `The name "${v.client.name}" comes from a program on this computer (${idHost}); any program here can claim any name. Approve only if you just started this connection yourself.`,
    );
  if (v.client.identifiedBy === 'registration')
    lines.push(`The client registered itself: nobody vouches for the name "${v.client.name}".`);
  if (idHost && v.client.redirectHost && idHost !== v.client.redirectHost)
    lines.push(
      `The answer goes to ${v.client.redirectHost}, not to ${idHost} where the client named itself. Approve only if you expect that.`,
    );
  return lines.map((text) => h('p', { class: 'warning', role: 'note', 'data-warning': '' }, text));
}

function decisionForm(v: ConsentView, status: HTMLElement) {
  const agent = h('input', {
    name: 'agent',
    required: true,
    maxlength: 64,
    pattern: '[a-z0-9][a-z0-9._\\-]*',
    autocomplete: 'off',
    list: 'consent-agents',
    value: v.suggestedAgent,
  });
  const readOnly = h('input', { type: 'checkbox', name: 'readOnly' });
  markOwner(agent);
  markOwner(readOnly);
  const approve = h('button', { type: 'submit', 'data-decision': 'approve' }, 'Approve');
  const deny = h('button', { type: 'button', class: 'danger', 'data-decision': 'deny' }, 'Deny');
  const form = h(
    'form',
    { 'aria-label': 'Your decision' },
    h('p', {}, field('Act as the agent (a new one, or one you have)', agent)),
    h('datalist', { id: 'consent-agents' }, ...v.agents.map((a) => h('option', { value: a }))),
    h(
      'p',
      {},
      h(
        'label',
        { class: 'check' },
        readOnly,
        'Read-only: deny it every write and destructive call',
      ),
    ),
    h(
      'p',
      { class: 'meta' },
      'Your rules, asks and limits apply to this agent as to any other; revoke it on the Agents screen to end its access.',
    ),
    h('div', { class: 'row' }, approve, ' ', deny),
  );
  const decide = async (decision: 'approve' | 'deny', button: HTMLButtonElement) => {
    await busy(button, async () => {
      try {
        const done = await post<{ redirectTo: string }>(
          `oauth/requests/${encodeURIComponent(v.id)}`,
          decision === 'approve'
            ? { decision, agent: agent.value.trim(), readOnly: readOnly.checked }
            : { decision },
        );
        fill(
          status,
          decision === 'approve' ? 'Approved; back to the client…' : 'Denied; back to the client…',
        );
        location.assign(done.redirectTo);
      } catch (e) {
        showError(e, 'Could not decide the connection');
      }
    });
  };
  onOwner(form, 'submit', (e) => {
    e.preventDefault();
    if (form.reportValidity()) void decide('approve', approve);
  });
  onOwner(deny, 'click', () => decide('deny', deny));
  return form;
}

export const oauthConsentScreen: Screen = (root, route) => {
  const id = route.params[0] ?? '';
  const status = h('p', { role: 'status' });
  const body = forAgent(h('section', { id: 'oauth-consent' }), null);
  fill(root, h('h1', { tabindex: -1 }, 'Connect an MCP client'), body, status);
  void get<ConsentView>(`oauth/requests/${encodeURIComponent(id)}`)
    .then((v) =>
      fill(
        body,
        h(
          'p',
          { class: 'lead' },
          h('strong', { 'data-client-name': v.client.name }, v.client.name),
          ' wants to act as an agent here.',
        ),
        facts(v),
        ...warnings(v),
        decisionForm(v, status),
      ),
    )
    .catch((e: unknown) => {
      fill(body, h('p', {}, e instanceof Error ? e.message : String(e)));
    });
};
