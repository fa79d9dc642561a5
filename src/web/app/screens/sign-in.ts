/**
 * The sign-in screen, shown while this browser is not signed in as the owner
 * (spec/authority.md §1): it accepts the pasted owner token; the link printed
 * by `airlock serve` signs in by itself (main.ts). It shows no workspace data.
 */
import { busy, fill, h } from '../dom.js';
import { form as withSubmit, messageOf, refuse } from '../form.js';
import { signIn } from '../session.js';
import { passkeyAssertionForSignIn } from '../passkey.js';

export interface SignInOptions {
  /** Why the screen is shown, in words (a refused link, an ended session). */
  message?: string;
  /** Called once the owner is signed in. */
  onSignedIn(): void;
}

/** An agent's token pasted here: say what it is for, besides the server's refusal. */
const AGENT_HINT =
  'That is an agent’s token (ak_…): agents put it in their MCP client configuration. Here, paste the owner token.';

export function signInScreen(root: HTMLElement, options: SignInOptions): void {
  const input = h('input', {
    id: 'owner-token',
    name: 'owner-token',
    type: 'password',
    autocomplete: 'current-password',
    spellcheck: 'false',
    required: true,
    'aria-describedby': 'sign-in-help',
  });
  const error = h('p', { id: 'sign-in-error', class: 'result-err', role: 'alert' });
  const button = h('button', { type: 'submit', class: 'primary' }, 'Sign in');
  const showProblem = (text: string) => {
    error.textContent = text;
    input.setAttribute('aria-invalid', 'true');
    input.setAttribute('aria-describedby', 'sign-in-error sign-in-help');
  };
  if (options.message) showProblem(options.message);

  // A hidden user name lets password managers keep the token with this form.
  const username = h('input', {
    type: 'text',
    name: 'username',
    autocomplete: 'username',
    value: 'owner',
    hidden: true,
  });
  const form = h(
    'form',
    { class: 'stack-form', 'aria-labelledby': 'sign-in-title' },
    username,
    h('label', { for: 'owner-token' }, 'Owner token', input),
    h('div', { class: 'row' }, button),
  );
  withSubmit(form, {
    // Not signed in yet: there is no owner whose gestures to tell apart.
    anyone: true,
    button,
    read: () => input.value.trim() || refuse('Paste the owner token first.'),
    send: async (token) => {
      await signIn({ token });
      options.onSignedIn();
    },
    failed: (err, token) => {
      const said = messageOf(err);
      if (token === undefined) return showProblem(said);
      showProblem(token.startsWith('ak_') ? `${AGENT_HINT} ${said}` : said);
      input.select();
    },
  });
  // Once a passkey is enrolled, it is the way in (user verification required).
  const withPasskey = h('button', { type: 'button', class: 'primary' }, 'Sign in with a passkey');
  withPasskey.addEventListener('click', () => {
    void busy(withPasskey, async () => {
      try {
        await signIn({ passkey: await passkeyAssertionForSignIn() });
        options.onSignedIn();
      } catch (err) {
        showProblem(err instanceof Error ? err.message : String(err));
      }
    });
  });
  fill(
    root,
    h('h1', { id: 'sign-in-title', tabindex: '-1' }, 'Sign in'),
    h('div', { class: 'row' }, withPasskey),
    h(
      'p',
      { id: 'sign-in-help', class: 'meta' },
      'Open the sign-in link that airlock serve printed when it started (it works once, for 10 minutes), or paste the owner token: the contents of owner.token in the data folder.',
    ),
    form,
    error,
  );
}
