import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import type { Client } from '@modelcontextprotocol/client';
import {
  BRIDGE_TOKEN,
  mcpClient,
  openDemo,
  startWorkspace,
  type CallResult,
  type Workspace,
} from './browser-helpers.js';
import { launchChromium } from '../../helpers/browser.js';
import { toolJson } from '../../helpers/results.js';
import { waitFor } from '../../helpers/wait.js';

let ws: Workspace;
let browser: Browser;
let page: Page;
let client: Client;

const ALL_ON = {
  executeActions: true,
  readStore: true,
  writeStore: true,
  emitEvents: true,
  readDOM: true,
  modifyDOM: true,
  readDiagnostics: true,
};

type Win = {
  bridge: { setPermissions(f: Record<string, boolean>): void; isConnected(): boolean };
  demo: {
    submitted: Record<string, string>[];
    aborted: number[];
    navigations: string[];
    shadowClicks?: number;
  };
};

const call = async (name: string, args: Record<string, unknown> = {}) =>
  (await client.callTool({ name, arguments: args })) as unknown as CallResult;
/** Runs one of the page's actions in the page itself (`wu.ai.execute`), past the relay. */
const pageExecute = (action: string, params: Record<string, unknown>) =>
  page.evaluate(
    ({ action, params }) =>
      (
        window as unknown as { wu: { ai: { execute(a: string, p: unknown): Promise<unknown> } } }
      ).wu.ai.execute(action, params),
    { action, params },
  );
const permit = (flags: Record<string, boolean>) =>
  page.evaluate((f) => (window as unknown as Win).bridge.setPermissions(f), flags);

beforeAll(async () => {
  [ws, browser] = await Promise.all([startWorkspace(), launchChromium()]);
  client = await mcpClient(ws);
  page = await openDemo(browser, ws);
});
afterAll(async () => {
  await client?.close();
  await browser?.close();
  await ws?.close();
});
beforeEach(async () => {
  await permit(ALL_ON);
});

describe('the page door end to end', () => {
  it('publishes exactly the 18 wu_* tools', async () => {
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(
      [
        'wu_conexion',
        'wu_list_actions',
        'wu_execute_action',
        'wu_status',
        'wu_list_apps',
        'wu_list_events',
        'wu_get_state',
        'wu_set_state',
        'wu_emit_event',
        'wu_navigate',
        'wu_snapshot',
        'wu_screenshot',
        'wu_click',
        'wu_type',
        'wu_console',
        'wu_network',
        'wu_mount_app',
        'wu_unmount_app',
      ].sort(),
    );
  });

  it('wu_conexion reports the relay and the connected page', async () => {
    const r = await call('wu_conexion');
    expect(r.isError).toBeFalsy();
    expect(toolJson(r)).toEqual({
      puerto: ws.door.relay()!.address()!.port,
      host: '127.0.0.1',
      requiere_token: true,
      app_conectada: true,
    });
  });

  it('lists and runs actions; success:false is not isError, refusals are', async () => {
    const list = toolJson(await call('wu_list_actions'));
    expect(list.count).toBe((list.actions as unknown[]).length);
    expect((list.actions as { name: string }[]).map((a) => a.name)).toContain('sum_local');
    const sum = await call('wu_execute_action', { action: 'sum_local', params: { a: 2, b: 3 } });
    expect(sum.isError).toBeFalsy();
    expect(toolJson(sum)).toEqual({ action: 'sum_local', success: true, result: { sum: 5 } });
    const failed = await call('wu_execute_action', { action: 'fail_local' });
    expect(failed.isError).toBeFalsy();
    expect(toolJson(failed)).toEqual({
      action: 'fail_local',
      success: false,
      reason: 'this action always fails',
    });
    const unknown = await call('wu_execute_action', { action: 'nope' });
    expect(unknown.isError).toBe(true);
    expect(toolJson(unknown).code).toBe('WU_ACTION_NOT_FOUND');
    const invalid = await call('wu_execute_action', {
      action: 'sum_local',
      params: { a: 'x', b: 1 },
    });
    expect(invalid.isError).toBe(true);
    expect(toolJson(invalid).code).toBe('WU_INVALID_PARAMS');
  });

  it('wu_status shows framework, apps, store keys and counts; keys are [] without readStore', async () => {
    const s = toolJson(await call('wu_status'));
    expect(s).toMatchObject({
      framework: 'airlock-bridge',
      storeKeys: ['user', 'cart', 'settings'],
    });
    expect(typeof s.actionCount).toBe('number');
    expect(typeof s.eventCount).toBe('number');
    await permit({ readStore: false });
    expect(toolJson(await call('wu_status')).storeKeys).toEqual([]);
  });

  it('reads and writes the store', async () => {
    expect(toolJson(await call('wu_get_state', { path: 'user.name' }))).toEqual({
      path: 'user.name',
      value: 'Ada',
    });
    expect(toolJson(await call('wu_set_state', { path: 'user.name', value: 'Grace' }))).toEqual({
      path: 'user.name',
      value: 'Grace',
      updated: true,
    });
    const root = toolJson(await call('wu_get_state'));
    expect(root.path).toBe('');
    expect((root.value as { user: { name: string } }).user.name).toBe('Grace');
    const empty = await call('wu_set_state', { path: '', value: 1 });
    expect(empty.isError).toBe(true);
  });

  it('emits events, refusing reserved namespaces in the relay and in the bridge', async () => {
    expect(toolJson(await call('wu_emit_event', { event: 'agent:hello', data: { n: 1 } }))).toEqual(
      {
        emitted: 'agent:hello',
        data: { n: 1 },
      },
    );
    for (const event of ['wu:x', 'system:x', 'app:x']) {
      const r = await call('wu_emit_event', { event });
      expect(r.isError).toBe(true);
      expect(toolJson(r).code).toBe('WU_RESERVED_EVENT');
    }
    // Through wu_execute_action the built-in action is the tool, refused alike.
    const viaAction = await call('wu_execute_action', {
      action: 'emitEvent',
      params: { event: 'wu:boot' },
    });
    expect(toolJson(viaAction).code).toBe('WU_RESERVED_EVENT');
    // The bridge refuses it too, through its built-in action.
    expect(await pageExecute('emitEvent', { event: 'wu:boot' })).toMatchObject({ success: false });
    const events = toolJson(await call('wu_list_events', { limit: 200 }));
    expect((events.events as { event: string }[]).some((e) => e.event === 'wu:boot')).toBe(false);
  });

  it('wu_set_state cannot pollute prototypes: the tool and the bridge refuse __proto__, constructor and prototype segments', async () => {
    for (const path of [
      '__proto__.polluted',
      'user.__proto__.x',
      'constructor.prototype.polluted',
    ]) {
      const r = await call('wu_set_state', { path, value: 'yes' });
      expect(r.isError, path).toBe(true);
      expect(JSON.stringify(toolJson(r))).toContain('__proto__');
    }
    // Through wu_execute_action the built-in action is the tool, refused alike.
    const viaAction = await call('wu_execute_action', {
      action: 'setState',
      params: { path: '__proto__.polluted', value: 'yes' },
    });
    expect(viaAction.isError).toBe(true);
    expect(JSON.stringify(toolJson(viaAction))).toContain('__proto__');
    // Past the tool's schema, the bridge refuses them itself (its own action).
    expect(
      await pageExecute('setState', { path: '__proto__.polluted', value: 'yes' }),
    ).toMatchObject({ success: false });
    const polluted = await page.evaluate(() => ({
      plain: ({} as Record<string, unknown>).polluted,
      proto: (Object.prototype as unknown as Record<string, unknown>).polluted,
      x: ({} as Record<string, unknown>).x,
    }));
    expect(polluted).toEqual({});
    // The page's own data is still reachable.
    expect(toolJson(await call('wu_set_state', { path: 'user.role', value: 'ops' }))).toMatchObject(
      {
        updated: true,
      },
    );
  });

  it('reserved event names are matched after trimming and case-folding', async () => {
    for (const event of [' WU:ready', 'Wu:Ready', 'SYSTEM:x', '\tapp:x']) {
      const r = await call('wu_emit_event', { event });
      expect(r.isError, JSON.stringify(event)).toBe(true);
      expect(toolJson(r).code).toBe('WU_RESERVED_EVENT');
    }
    const viaAction = await call('wu_execute_action', {
      action: 'emitEvent',
      params: { event: ' WU:boot' },
    });
    expect(toolJson(viaAction).code).toBe('WU_RESERVED_EVENT');
    expect(await pageExecute('emitEvent', { event: ' WU:boot' })).toMatchObject({
      success: false,
    });
  });

  it('navigates by emitting shell:navigate and updating currentPath only with writeStore', async () => {
    expect(toolJson(await call('wu_navigate', { route: '/orders' }))).toMatchObject({
      navigated: '/orders',
    });
    expect(await page.evaluate(() => (window as unknown as Win).demo.navigations)).toContain(
      '/orders',
    );
    expect(toolJson(await call('wu_get_state', { path: 'currentPath' })).value).toBe('/orders');
    await permit({ writeStore: false });
    expect(toolJson(await call('wu_navigate', { route: '/other' }))).toMatchObject({
      navigated: '/other',
      currentPathUpdated: false,
    });
    expect(toolJson(await call('wu_get_state', { path: 'currentPath' })).value).toBe('/orders');
  });

  it('lists, mounts and unmounts apps', async () => {
    expect(toolJson(await call('wu_list_apps'))).toMatchObject({
      count: 1,
      apps: [{ name: 'counter', mounted: false }],
    });
    expect(toolJson(await call('wu_mount_app', { appName: 'counter' }))).toMatchObject({
      mounted: 'counter',
    });
    expect(await page.locator('#increment').count()).toBe(1);
    const snap = toolJson(await call('wu_snapshot', { appName: 'counter' }));
    expect(JSON.stringify(snap.tree)).toContain('Increment');
    expect(toolJson(await call('wu_unmount_app', { appName: 'counter' }))).toMatchObject({
      unmounted: 'counter',
    });
    expect(await page.locator('#increment').count()).toBe(0);
    expect(toolJson(await call('wu_unmount_app', { appName: 'counter' })).code).toBe(
      'WU_APP_NOT_MOUNTED',
    );
  });

  it('takes an accessibility snapshot whose refs wu_click accepts, shadow DOM included', async () => {
    const snap = toolJson(await call('wu_snapshot'));
    expect(snap).toMatchObject({ app: null, truncated: false });
    type Node = { ref?: string; role: string; name?: string; children?: Node[] };
    const flat: Node[] = [];
    const walk = (n: Node[]) => n.forEach((x) => (flat.push(x), walk(x.children ?? [])));
    walk(snap.tree as Node[]);
    expect(flat.find((n) => n.role === 'heading')).toMatchObject({
      name: 'Airlock page demo',
      level: 1,
    });
    expect(flat.find((n) => n.role === 'textbox' && n.name === 'Name')).toBeTruthy();
    expect(flat.find((n) => n.role === 'checkbox')).toMatchObject({
      name: 'Subscribe',
      checked: false,
    });
    const shadow = flat.find((n) => n.role === 'button' && n.name === 'Shadow toggle')!;
    expect(shadow.ref).toMatch(/^e\d+$/);
    const clicked = toolJson(await call('wu_click', { ref: shadow.ref }));
    expect(clicked).toMatchObject({ clicked: true, element: { ref: shadow.ref, role: 'button' } });
    expect(await page.evaluate(() => (window as unknown as Win).demo.shadowClicks)).toBe(1);
    // Refs are stable across snapshots.
    const again = JSON.stringify(toolJson(await call('wu_snapshot')).tree);
    expect(again).toContain(`"ref":"${shadow.ref}"`);
    const checkbox = flat.find((n) => n.role === 'checkbox')!;
    await call('wu_click', { text: 'Subscribe' });
    expect(await page.locator('#subscribe').isChecked()).toBe(true);
    expect(toolJson(await call('wu_click', { ref: 'e999999' })).code).toBe('WU_ELEMENT_NOT_FOUND');
    void checkbox;
  });

  it('bounds the snapshot and says when it was cut', async () => {
    await page.evaluate(() => {
      const list = document.createElement('ul');
      list.id = 'many';
      for (let i = 0; i < 2000; i++)
        list.appendChild(document.createElement('li')).textContent = `item ${i}`;
      document.body.appendChild(list);
    });
    const snap = toolJson(await call('wu_snapshot'));
    expect(snap.truncated).toBe(true);
    expect(snap.nodeCount).toBeLessThanOrEqual(snap.maxNodes as number);
    expect(String(snap.note)).toMatch(/selector/);
    await page.evaluate(() => document.querySelector('#many')!.remove());
  });

  it('a long page’s snapshot stays within the answer’s token budget; maxChars and selector narrow it', async () => {
    await page.evaluate(() => {
      const article = document.createElement('article');
      article.id = 'long';
      // 5,000 paragraphs and their texts: a 10,000-node page (issue 17's Done-when).
      for (let i = 0; i < 5000; i++)
        article.appendChild(document.createElement('p')).textContent =
          `Paragraph ${i}: ${'documentation text that goes on '.repeat(4)}`;
      const aside = document.createElement('aside');
      aside.id = 'small';
      aside.appendChild(document.createElement('button')).textContent = 'Only me';
      document.body.append(article, aside);
    });
    try {
      const whole = await call('wu_snapshot');
      expect(whole.isError).toBeFalsy();
      const text = (whole.content as { text?: string }[])[0]!.text!;
      // Text plus structuredContent, / 4: within the default 20k-token budget.
      expect(
        (text.length + JSON.stringify(whole.structuredContent ?? null).length) / 4,
      ).toBeLessThanOrEqual(20_000);
      const snap = toolJson(whole);
      expect(snap).toMatchObject({ truncated: true, note: expect.stringMatching(/selector/) });
      const small = toolJson(await call('wu_snapshot', { maxChars: 5000 }));
      expect(JSON.stringify(small.tree).length).toBeLessThanOrEqual(5000);
      expect(small.maxChars).toBe(5000);
      const part = toolJson(await call('wu_snapshot', { selector: '#small' }));
      expect(part.truncated).toBe(false);
      expect(JSON.stringify(part.tree)).toContain('Only me');
      expect(JSON.stringify(part.tree)).not.toContain('Paragraph');
      const missing = await call('wu_snapshot', { selector: '#nothing-here' });
      expect(missing.isError).toBe(true);
      expect(JSON.stringify(toolJson(missing))).toMatch(/No element matches selector/);
    } finally {
      await page.evaluate(() => {
        document.querySelector('#long')?.remove();
        document.querySelector('#small')?.remove();
      });
    }
  });

  it('a delta snapshot answers only what changed since the last snapshot of that part, by ref', async () => {
    await page.evaluate(() => {
      const list = document.createElement('ul');
      list.id = 'delta-list';
      for (const name of ['Alpha', 'Beta', 'Gamma'])
        list
          .appendChild(document.createElement('li'))
          .appendChild(document.createElement('button')).textContent = name;
      document.body.appendChild(list);
    });
    try {
      // Nothing to compare with yet for this part: the whole tree, saying so.
      const first = toolJson(await call('wu_snapshot', { selector: '#delta-list', delta: true }));
      expect(first).toMatchObject({ delta: false, deltaNote: expect.stringMatching(/whole tree/) });
      const refOf = (name: string) =>
        new RegExp(`"ref":"(e\\d+)","role":"button","name":"${name}"`).exec(
          JSON.stringify(first.tree),
        )![1]!;
      const [alpha, beta] = [refOf('Alpha'), refOf('Beta')];
      expect(JSON.stringify(first.tree)).toContain('Gamma');

      // Unchanged page: an empty delta.
      const same = toolJson(await call('wu_snapshot', { selector: '#delta-list', delta: true }));
      expect(same).toMatchObject({ delta: true, added: [], changed: [], removed: [] });
      expect(same.unchanged).toBeGreaterThanOrEqual(6);

      await page.evaluate(() => {
        const buttons = document.querySelectorAll('#delta-list button');
        buttons[0]!.textContent = 'Alpha 2';
        buttons[1]!.closest('li')!.remove();
        document
          .querySelector('#delta-list')!
          .appendChild(document.createElement('li'))
          .appendChild(document.createElement('button')).textContent = 'Delta';
      });
      const delta = toolJson(await call('wu_snapshot', { selector: '#delta-list', delta: true }));
      expect(delta.delta).toBe(true);
      const changed = delta.changed as { ref: string; node: { name?: string } }[];
      expect(changed.map((c) => [c.ref, c.node.name])).toContainEqual([alpha, 'Alpha 2']);
      // Gamma did not change and is not repeated.
      expect(JSON.stringify(delta)).not.toContain('Gamma');
      expect(delta.removed).toContain(beta);
      const added = delta.added as { node: { role: string; name?: string } }[];
      expect(added.map((a) => a.node.name)).toContain('Delta');
      // Smaller than the whole part, which it would otherwise repeat.
      expect(JSON.stringify(delta).length).toBeLessThan(JSON.stringify(first).length + 400);

      // A plain snapshot of the part is a new base too: nothing changed since.
      await call('wu_snapshot', { selector: '#delta-list' });
      expect(
        toolJson(await call('wu_snapshot', { selector: '#delta-list', delta: true })),
      ).toMatchObject({ delta: true, added: [], changed: [], removed: [] });
    } finally {
      await page.evaluate(() => document.querySelector('#delta-list')?.remove());
    }
  });

  it('types into an input, a textarea and a contenteditable, and submits with requestSubmit', async () => {
    await call('wu_type', { selector: '#message', text: 'Hello there' });
    await call('wu_type', { selector: '#notes', text: 'Rich notes' });
    const snap = JSON.stringify(toolJson(await call('wu_snapshot')).tree);
    const ref = /"ref":"(e\d+)","role":"textbox","name":"Name"/.exec(snap)![1]!;
    const typed = toolJson(await call('wu_type', { ref, text: 'Ada', clear: true, submit: true }));
    expect(typed).toMatchObject({ typed: 3, submitted: true, value: 'Ada' });
    const submitted = await page.evaluate(() => (window as unknown as Win).demo.submitted);
    expect(submitted.at(-1)).toEqual({ name: 'Ada', message: 'Hello there', notes: 'Rich notes' });
    expect(await page.locator('#result').textContent()).toBe('Thanks, Ada!');
    const notEditable = await call('wu_type', { selector: 'h1', text: 'x' });
    expect(toolJson(notEditable).code).toBe('WU_NOT_EDITABLE');
  });

  it('returns a screenshot as PNG image content with metadata', async () => {
    const r = await call('wu_screenshot', { selector: '#contact' });
    expect(r.isError).toBeFalsy();
    expect(toolJson(r)).toMatchObject({ selector: '#contact', mimeType: 'image/png' });
    const image = r.content.find((c) => c.type === 'image')!;
    expect(image.mimeType).toBe('image/png');
    const bytes = Buffer.from(image.data!, 'base64');
    expect([...bytes.subarray(0, 8)]).toEqual([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
    const whole = await call('wu_screenshot');
    expect(whole.content.some((c) => c.type === 'image')).toBe(true);
  });

  it('cancelling wu_execute_action aborts the handler signal in the page', async () => {
    const controller = new AbortController();
    const pending = client
      .callTool(
        { name: 'wu_execute_action', arguments: { action: 'wait_for_cancel' } },
        { signal: controller.signal },
      )
      .catch((e: unknown) => e);
    // Abort once the relay has sent the request to the page: the page starts the
    // handler (and listens for its abort) before it reads the cancel frame behind it.
    await waitFor(() => ws.door.relay()!.pending() === 1, {
      message: 'the relay to forward wu_execute_action to the page',
    });
    controller.abort();
    await pending;
    await expect
      .poll(() => page.evaluate(() => (window as unknown as Win).demo.aborted.length), {
        timeout: 3000,
      })
      .toBe(1);
    expect(ws.door.relay()!.pending()).toBe(0);
  });

  it('keeps secrets out of every result: store, console, events, network, and the bridge token', async () => {
    const SECRET = 'sk-live-abcdef123456';
    await page.evaluate(
      async ({ secret, token }) => {
        const w = window as unknown as { wu: { store: { set(p: string, v: unknown): void } } };
        w.wu.store.set('session', { token: secret });
        w.wu.store.set('profile', { apiKey: secret, note: `the bridge token is ${token}` });
        console.log(`login ok token=${secret}`);
        console.warn('Authorization: Bearer ' + secret);
        console.error({ password: secret });
        (
          window as unknown as { bridge: { events: { emit(e: string, d: unknown): void } } }
        ).bridge.events.emit('demo:login', {
          user: 'ada',
          credentials: { secret },
          url: `https://x.test/cb?access_token=${secret}`,
        });
        await fetch(`/healthz?token=${secret}&page=1`, {
          headers: { Authorization: `Bearer ${secret}` },
        });
      },
      { secret: SECRET, token: BRIDGE_TOKEN },
    );
    const results = await Promise.all([
      call('wu_get_state'),
      call('wu_get_state', { path: 'session' }),
      call('wu_get_state', { path: 'profile.note' }),
      call('wu_console', { limit: 500 }),
      call('wu_list_events', { limit: 200 }),
      call('wu_network', { limit: 500 }),
      call('wu_status'),
    ]);
    for (const r of results) {
      expect(r.isError).toBeFalsy();
      const text = JSON.stringify(r);
      expect(text).not.toContain(SECRET);
      expect(text).not.toContain(BRIDGE_TOKEN);
    }
    const network = toolJson(results[5]!);
    const req = (
      network.requests as { url: string; requestHeaders: Record<string, string> }[]
    ).find((x) => x.url.includes('/healthz'))!;
    expect(req.url).toContain('token=%5BREDACTED%5D');
    expect(req.url).toContain('page=1');
    expect(req.requestHeaders.authorization).toBe('[REDACTED]');
    const consoleLog = toolJson(results[3]!);
    expect(JSON.stringify(consoleLog)).toContain('[REDACTED]');
    expect(toolJson(await call('wu_console', { level: 'error' })).count).toBeGreaterThanOrEqual(1);
    expect(
      toolJson(await call('wu_network', { method: 'GET', status: 200 })).count,
    ).toBeGreaterThanOrEqual(1);
  });

  const REFUSALS: [
    string,
    [string, Record<string, unknown>][],
    [string, Record<string, unknown>][],
  ][] = [
    [
      'executeActions',
      [['wu_execute_action', { action: 'sum_local', params: { a: 1, b: 2 } }]],
      [],
    ],
    ['readStore', [['wu_get_state', { path: 'user' }]], [['getState', { path: 'user' }]]],
    [
      'writeStore',
      [['wu_set_state', { path: 'x', value: 1 }]],
      [
        ['setState', { path: 'x', value: 1 }],
        ['add_to_cart', { item: 'pen' }],
      ],
    ],
    [
      'emitEvents',
      [
        ['wu_emit_event', { event: 'agent:x' }],
        ['wu_navigate', { route: '/x' }],
      ],
      [
        ['emitEvent', { event: 'agent:x' }],
        ['navigate', { route: '/x' }],
      ],
    ],
    [
      'readDOM',
      [
        ['wu_snapshot', {}],
        ['wu_screenshot', {}],
      ],
      [['snapshot', {}]],
    ],
    [
      'modifyDOM',
      [
        ['wu_click', { selector: 'button' }],
        ['wu_type', { selector: '#name', text: 'x' }],
        ['wu_mount_app', { appName: 'counter' }],
        ['wu_unmount_app', { appName: 'counter' }],
      ],
      [['click', { selector: 'button' }]],
    ],
    [
      'readDiagnostics',
      [
        ['wu_list_events', {}],
        ['wu_console', {}],
        ['wu_network', {}],
      ],
      [
        ['readEvents', {}],
        ['readConsole', {}],
      ],
    ],
  ];
  it.each(REFUSALS)(
    'with %s off the page refuses the matching tools and actions',
    async (flag, tools, actions) => {
      await permit({ [flag]: false });
      for (const [name, args] of tools) {
        const r = await call(name, args);
        expect(r.isError, name).toBe(true);
        expect(toolJson(r).code, name).toBe('WU_PERMISSION_DENIED');
      }
      for (const [action, params] of actions) {
        const r = await call('wu_execute_action', { action, params });
        expect(r.isError, action).toBe(true);
        expect(toolJson(r).code, action).toBe('WU_PERMISSION_DENIED');
      }
    },
  );
});
