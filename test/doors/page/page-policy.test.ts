/**
 * The owner's policy over the page door, with a scripted page (no browser):
 * an action whose effect the page cannot tell is asked, a built-in action is
 * its tool, and look-alike action names meet the owner's rules.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createPageTools } from '../../../src/doors/page/tools.js';
import { loadConfig } from '../../../src/doors/page/config.js';
import { connection } from '../../../src/kernel/connection.js';
import type { CallOutcome } from '../../../src/kernel/calls/pipeline.js';
import type { ServedDoor } from '../../../src/transport/surface.js';
import { testKernel, type TestKernel } from '../../helpers/kernel.js';

const ORIGIN = 'http://127.0.0.1:5173';
const agent = connection('agent:alice', 'http-principal', undefined, 'alice');

interface Sent {
  command: string;
  params: Record<string, unknown>;
}

/**
 * A page that answers `list_actions` with `actions` (or, when `busy`, only once
 * the test releases it, like a page whose main thread is busy), and answers
 * every other command `{ran: command}`.
 */
function scriptedPage(actions: { name: string; confirm?: boolean }[]) {
  const sent: Sent[] = [];
  let busy = false;
  const late: (() => void)[] = [];
  const relay = {
    conectado: () => true,
    address: () => null,
    origin: () => ORIGIN,
    async enviar(command: string, params?: unknown, options?: { signal?: AbortSignal }) {
      sent.push({ command, params: (params ?? {}) as Record<string, unknown> });
      if (command !== 'list_actions') return { ran: command, params };
      if (!busy) return { actions, count: actions.length };
      return new Promise((resolve, reject) => {
        // The page answers when it is free again; the door may have stopped waiting.
        late.push(() => resolve({ actions, count: actions.length }));
        options?.signal?.addEventListener('abort', () => reject(options.signal!.reason));
      });
    },
  };
  return {
    relay,
    sent,
    ran: () => sent.filter((s) => s.command !== 'list_actions'),
    setBusy(on: boolean) {
      busy = on;
    },
    /** The busy page finally answers every list_actions it was asked. */
    answerLate() {
      for (const f of late.splice(0)) f();
    },
  };
}

let tk: TestKernel | null = null;
afterEach(async () => {
  await tk?.dispose();
  tk = null;
});

async function mount(page: ReturnType<typeof scriptedPage>, effectTimeoutMs = 50) {
  const tools = createPageTools({
    config: loadConfig({ WU_MCP_TOKEN: 'x'.repeat(20) }),
    relay: () => page.relay,
    effectTimeoutMs,
  });
  const door: ServedDoor = { name: 'page', tools };
  tk = await testKernel([door]);
  return (tool: string, args: Record<string, unknown>): Promise<CallOutcome> =>
    tk!.kernel.call('page', tool, args, { connection: agent });
}

describe('an action whose effect the page cannot tell', () => {
  it('a confirm action of a page too busy to list its actions is asked, and never runs before the owner approves', async () => {
    const page = scriptedPage([{ name: 'delete_everything', confirm: true }]);
    const call = await mount(page);
    page.setBusy(true);
    const first = await call('wu_execute_action', { action: 'delete_everything' });
    expect(first.ok).toBe(false);
    expect(!first.ok && first.code).toBe('approvalRequired');
    // The page's answer arriving later changes nothing: still asked, still not run.
    page.answerLate();
    const again = await call('wu_execute_action', { action: 'delete_everything' });
    expect(!again.ok && again.code).toBe('approvalRequired');
    expect(page.ran()).toEqual([]);
    // The ask records the effect decided and why.
    const [asked] = await tk!.kernel.consent.pending();
    expect(asked!.preview).toMatchObject({
      effect: 'destructive',
      effectUnknown: expect.stringContaining('did not say'),
    });
    // Once the owner approves, the call runs once.
    page.setBusy(false);
    await tk!.kernel.asks.approve(asked!.id, 'once');
    const approved = await call('wu_execute_action', { action: 'delete_everything' });
    expect(approved.ok).toBe(true);
    expect(page.ran().map((s) => s.command)).toEqual(['execute_action']);
  });

  it('a page that errors when asked for its actions gets the same: asked, not run', async () => {
    const page = scriptedPage([]);
    page.relay.enviar = async (command: string) => {
      page.sent.push({ command, params: {} });
      throw new Error('the page fell over');
    };
    const call = await mount(page);
    const out = await call('wu_execute_action', { action: 'anything' });
    expect(!out.ok && out.code).toBe('approvalRequired');
    expect(page.ran()).toEqual([]);
  });

  it('with no page connected the call is refused, and the owner is not asked about it', async () => {
    const page = scriptedPage([{ name: 'delete_everything', confirm: true }]);
    page.relay.conectado = () => false;
    const call = await mount(page);
    const out = await call('wu_execute_action', { action: 'delete_everything' });
    expect(out.ok).toBe(false);
    expect(!out.ok && [out.code, out.data?.code]).toEqual(['unavailable', 'WU_MCP_NOT_CONNECTED']);
    expect(await tk!.kernel.consent.pending()).toEqual([]);
    expect(page.sent).toEqual([]);
  });

  it('an action the page lists without confirm still runs as a write', async () => {
    const page = scriptedPage([{ name: 'add_todo', confirm: false }]);
    const call = await mount(page);
    expect((await call('wu_execute_action', { action: 'add_todo' })).ok).toBe(true);
    expect(page.ran().map((s) => s.command)).toEqual(['execute_action']);
  });
});

describe('a built-in action is its tool', () => {
  it('a deny rule on wu_get_state holds for wu_execute_action {action: "getState"}', async () => {
    const page = scriptedPage([{ name: 'getState' }]);
    const call = await mount(page);
    await tk!.kernel.policy.add({ tool: 'wu_get_state', decision: 'deny', reason: 'no reading' });
    for (const action of ['getState', 'GetState', ' getstate\u200b']) {
      const out = await call('wu_execute_action', { action, params: { path: 'user' } });
      expect(!out.ok && out.code, action).toBe('notAuthorized');
    }
    expect(page.ran()).toEqual([]);
  });

  it('a rate rule on wu_get_state counts wu_execute_action getState calls, and both are audited as wu_get_state', async () => {
    const page = scriptedPage([{ name: 'getState' }]);
    const call = await mount(page);
    await tk!.kernel.policy.add({ tool: 'wu_get_state', decision: 'allow', rate: '2/minute' });
    expect(
      (await call('wu_execute_action', { action: 'getState', params: { path: 'a' } })).ok,
    ).toBe(true);
    expect((await call('wu_get_state', { path: 'b' })).ok).toBe(true);
    const over = await call('wu_execute_action', { action: 'getState', params: { path: 'c' } });
    expect(!over.ok && over.code).toBe('busy');
    // The page got get_state, the tool's own command, with the same target.
    expect(page.ran().map((s) => [s.command, s.params.path])).toEqual([
      ['get_state', 'a'],
      ['get_state', 'b'],
    ]);
    const audit = await tk!.kernel.audit.list({});
    expect(audit.map((e) => e.tool)).toEqual(['wu_get_state', 'wu_get_state', 'wu_get_state']);
  });

  it.each([
    ['setState', { path: 'x', value: 1 }, 'wu_set_state'],
    ['snapshot', {}, 'wu_snapshot'],
    ['click', { selector: 'button' }, 'wu_click'],
    ['readEvents', { limit: 5 }, 'wu_list_events'],
    ['readConsole', { limit: 5 }, 'wu_console'],
    ['navigate', { route: '/x' }, 'wu_navigate'],
    ['emitEvent', { event: 'agent:x' }, 'wu_emit_event'],
  ])('a deny rule on its tool holds for the built-in action %s', async (action, params, tool) => {
    const page = scriptedPage([{ name: action }]);
    const call = await mount(page);
    await tk!.kernel.policy.add({ tool, decision: 'deny' });
    const out = await call('wu_execute_action', { action, params });
    expect(!out.ok && out.code).toBe('notAuthorized');
    expect(page.ran()).toEqual([]);
  });
});

describe('look-alike action names', () => {
  it.each(['Submit_Order', 'submit_order ', 'submit_order\u200b', 'ＳＵＢＭＩＴ_ＯＲＤＥＲ'])(
    "a deny on '*:submit_order' covers %j",
    async (action) => {
      const page = scriptedPage([{ name: action }]);
      const call = await mount(page);
      await tk!.kernel.policy.add({ target: '*:submit_order', decision: 'deny' });
      const out = await call('wu_execute_action', { action });
      expect(!out.ok && out.code).toBe('notAuthorized');
      expect(page.ran()).toEqual([]);
    },
  );
});
