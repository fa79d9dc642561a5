/**
 * The panel shown once after the owner adds an agent (issue 27): its token,
 * which no later screen can show again, and client configurations ready to
 * paste — HTTP with the Authorization header, as `airlock serve` prints
 * (src/cli/server/http-serve.ts), and the stdio command (docs/clients.md). The
 * panel holds a secret: it is private to the owner (the page bridge shows it
 * to no agent) and leaves the page when dismissed or when the screen closes.
 */
import { forAgent, h, onOwner } from '../../dom.js';

/** The key the configurations give the server in `mcpServers`. */
const CLIENT_NAME = 'airlock';

/** The HTTP client configuration for an agent's token, against the server this page came from. */
export function httpConfig(origin: string, token: string): string {
  return JSON.stringify(
    {
      mcpServers: {
        [CLIENT_NAME]: {
          type: 'http',
          url: `${origin}/mcp`,
          headers: { Authorization: `Bearer ${token}` },
        },
      },
    },
    null,
    2,
  );
}

/** Claude Code's one-line form of the same. */
export function httpCommand(origin: string, token: string): string {
  return `claude mcp add --transport http ${CLIENT_NAME} ${origin}/mcp --header "Authorization: Bearer ${token}"`;
}

/**
 * The stdio configuration: the client spawns Airlock on this machine. The
 * page does not know where Airlock is installed or its data folder, so those
 * stay for the owner to fill in, as in docs/clients.md.
 */
export const STDIO_CONFIG = JSON.stringify(
  {
    mcpServers: {
      [CLIENT_NAME]: {
        command: 'node',
        args: ['/path/to/airlock/bin/airlock.js', 'stdio', '--data', '/path/to/data-folder'],
      },
    },
  },
  null,
  2,
);

function copyable(label: string, text: string) {
  const pre = h('pre', { class: 'config', 'aria-label': label }, text);
  const copy = h('button', { type: 'button' }, `Copy the ${label === 'Token' ? 'token' : label}`);
  copy.addEventListener('click', () => {
    void navigator.clipboard?.writeText(text).then(
      () => (copy.textContent = 'Copied'),
      () => (copy.textContent = 'Select the text and copy it'),
    );
  });
  return h('div', {}, h('h3', {}, label), pre, copy);
}

/** The once-only panel for a new agent; `done` removes it. */
export function newAgentPanel(name: string, token: string, done: () => void): HTMLElement {
  const origin = location.origin;
  const close = h('button', { type: 'button' }, 'I have saved the token');
  onOwner(close, 'click', done);
  return forAgent(
    h(
      'section',
      { class: 'card new-agent', 'aria-label': `New agent ${name}`, 'data-new-agent': name },
      h('h2', {}, `Agent ${name} added`),
      h(
        'p',
        { role: 'note' },
        'This is the only time its token is shown: paste it into the client now. If it is lost, revoke the agent and add another.',
      ),
      copyable('Token', token),
      copyable('HTTP configuration', httpConfig(origin, token)),
      copyable('Claude Code command', httpCommand(origin, token)),
      h(
        'p',
        { class: 'meta' },
        'Over stdio the client spawns Airlock itself, on this machine: the process is its own agent, named after the client (stdio:<client>), and needs no token. Fill in where Airlock is installed and its data folder:',
      ),
      copyable('Stdio configuration', STDIO_CONFIG),
      close,
    ),
    null,
  );
}
