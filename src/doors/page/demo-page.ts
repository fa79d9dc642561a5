/**
 * The demo page served at `/page-demo`: it loads `/bridge.js`, gets its relay
 * URL and token from the workspace's same-origin route, and offers a store,
 * actions, a mountable app, a form (input, textarea, contenteditable) and a
 * shadow-DOM widget for an agent to drive. `?connect=0` skips connecting.
 */
export const DEMO_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Airlock page demo</title>
<style>
  body { font: 15px/1.4 system-ui, sans-serif; margin: 1.5rem; background: #fafafa; color: #222; }
  form { display: grid; gap: .5rem; max-width: 28rem; }
  [contenteditable] { border: 1px solid #999; min-height: 2rem; padding: .25rem; background: white; }
  #status { font-weight: bold; }
</style>
</head>
<body>
<header><h1>Airlock page demo</h1><p id="status" role="status">not connected</p></header>
<nav aria-label="Sections"><a href="#form">Form</a> <a href="#apps">Apps</a></nav>
<main>
  <section aria-label="Contact form" id="form">
    <h2>Contact</h2>
    <form id="contact">
      <label for="name">Name</label>
      <input id="name" name="name" placeholder="Your name">
      <label for="message">Message</label>
      <textarea id="message" name="message"></textarea>
      <div id="notes" contenteditable="true" role="textbox" aria-label="Notes"></div>
      <label><input type="checkbox" id="subscribe"> Subscribe</label>
      <button type="submit">Send</button>
    </form>
    <p id="result" aria-live="polite"></p>
  </section>
  <section aria-label="Apps" id="apps">
    <h2>Apps</h2>
    <div id="app-slot"></div>
    <demo-widget></demo-widget>
  </section>
</main>
<script type="module">
  import wu, * as bridge from '/bridge.js';
  window.bridge = bridge;
  window.wu = wu;
  window.demo = { submitted: [], aborted: [], navigations: [] };

  customElements.define('demo-widget', class extends HTMLElement {
    constructor() {
      super();
      const root = this.attachShadow({ mode: 'open' });
      root.innerHTML = '<button id="shadow-button" aria-pressed="false">Shadow toggle</button>';
      root.querySelector('button').addEventListener('click', (e) => {
        const b = e.currentTarget;
        b.setAttribute('aria-pressed', String(b.getAttribute('aria-pressed') !== 'true'));
        window.demo.shadowClicks = (window.demo.shadowClicks ?? 0) + 1;
      });
    }
  });

  bridge.useStore({ user: { name: 'Ada' }, cart: { items: [] }, settings: { theme: 'light' } });

  bridge.action('sum_local', {
    description: 'Add two numbers.',
    parameters: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'], additionalProperties: false },
    handler: ({ a, b }) => ({ sum: a + b }),
  });
  bridge.action('fail_local', {
    description: 'Always fails (success: false).',
    handler: () => ({ success: false, reason: 'this action always fails' }),
  });
  bridge.action('add_to_cart', {
    description: 'Add an item to the cart (needs writeStore).',
    parameters: { type: 'object', properties: { item: { type: 'string', minLength: 1 } }, required: ['item'] },
    permissions: ['writeStore'],
    handler: ({ item }, api) => {
      const items = [...(api.store.get('cart.items') ?? []), item];
      api.store.set('cart.items', items);
      return { items };
    },
  });
  bridge.action('wait_for_cancel', {
    description: 'Waits until cancelled (or 20 s).',
    handler: (_p, _api, signal) => new Promise((resolve) => {
      const t = setTimeout(() => resolve({ waited: true }), 20000);
      signal.addEventListener('abort', () => { clearTimeout(t); window.demo.aborted.push(Date.now()); resolve({ aborted: true }); });
    }),
  });

  let count = 0;
  bridge.app('counter', {
    description: 'A counter with an Increment button.',
    container: '#app-slot',
    mount(el) {
      el.innerHTML = '<p id="count">Count: 0</p><button id="increment">Increment</button>';
      el.querySelector('#increment').addEventListener('click', () => { count++; el.querySelector('#count').textContent = 'Count: ' + count; });
    },
    unmount() { document.querySelector('#app-slot').innerHTML = ''; },
  });

  document.querySelector('#contact').addEventListener('submit', (e) => {
    e.preventDefault();
    const entry = {
      name: document.querySelector('#name').value,
      message: document.querySelector('#message').value,
      notes: document.querySelector('#notes').innerText,
    };
    window.demo.submitted.push(entry);
    document.querySelector('#result').textContent = 'Thanks, ' + entry.name + '!';
    bridge.events.emit('demo:submitted', entry);
  });
  bridge.events.on('shell:navigate', (data) => window.demo.navigations.push(data.route));
  bridge.onStatus((state, detail) => {
    document.querySelector('#status').textContent = state + (detail ? ' (' + detail + ')' : '');
  });

  async function start() {
    // The owner's session, as the workspace UI keeps it in this origin's sessionStorage (no cookie).
    const session = JSON.parse(sessionStorage.getItem('airlock.ownerSession') || 'null');
    const headers = session ? { [session.header]: session.secret } : {};
    const response = await fetch('/api/v1/page/bridge-token', { headers });
    if (!response.ok) throw new Error('no bridge token: ' + response.status);
    const { url, token } = await response.json();
    await bridge.connect(url, { token });
  }
  window.demo.ready = new URLSearchParams(location.search).get('connect') === '0' ? Promise.resolve() : start();
</script>
</body>
</html>
`;
