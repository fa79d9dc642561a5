/**
 * The 18 `wu_*` tools (spec/page.md "Tools"), as kernel tools. Each forwards
 * a bridge command (`wu_list_actions` → `list_actions`) through the relay;
 * the page checks its own permission flags and answers. Argument names,
 * ranges and defaults follow the reference so WU prompts work unchanged.
 */
import { createHash } from 'node:crypto';
import { z } from 'zod';
import {
  defineTool,
  failure,
  redact,
  type AnyToolDef,
  type Effect,
  type Failure,
  type ToolContext,
} from '../../kernel/index.js';
import { isReservedEvent } from './auth.js';
import type { RelayConfig } from './config.js';
import { sendCommand, type CommandSender } from './command.js';
import { foldName } from './action-name.js';

export interface PageToolsOptions {
  /** The relay; null while it is not listening. */
  relay: () => CommandSender | null;
  config: RelayConfig;
  /** How long the door waits for the page's action list to learn an action's effect (default 2 s). */
  effectTimeoutMs?: number;
}

const name = (max: number) => z.string().min(1).max(max);
/** Segments that reach an object's prototype instead of the page's data (the bridge refuses them too). */
const PROTOTYPE_SEGMENTS = ['__proto__', 'constructor', 'prototype'];
/** A dot path into the page store, refused when it would reach a prototype. */
const storePath = (schema: z.ZodString) =>
  schema.refine((p) => !p.split('.').some((s) => PROTOTYPE_SEGMENTS.includes(s)), {
    message:
      "a path segment may not be '__proto__', 'constructor' or 'prototype'; name the page's own data",
  });
const json = z.unknown();

/** `text` whole, or cut to `max` characters with how many more there were. */
const bounded = (text: string, max: number) =>
  text.length > max ? `${text.slice(0, max)}… (${text.length - max} more characters)` : text;

/** The element a click or type names, in words: `ref e12`, `selector "#buy"`, `text "Buy"`. */
function elementWords(e: { selector?: string; text?: string; ref?: string }): string {
  const parts = [
    e.ref !== undefined ? `ref ${bounded(e.ref, 100)}` : null,
    e.selector !== undefined ? `selector ${JSON.stringify(bounded(e.selector, 200))}` : null,
    e.text !== undefined ? `text ${JSON.stringify(bounded(e.text, 200))}` : null,
  ];
  return parts.filter((p) => p !== null).join(', ');
}

/**
 * A short digest of the page store's value at `path` (what the owner judged
 * an approved set_state against), or undefined when the page cannot say
 * (no page, or its readStore permission is off: nothing the agent may not
 * read is ever compared, nor shown).
 */
async function storeDigest(options: PageToolsOptions, path: string): Promise<string | undefined> {
  const relay = options.relay();
  if (!relay?.conectado()) return undefined;
  try {
    const read = (await relay.enviar(
      'get_state',
      { path },
      { signal: AbortSignal.timeout(options.effectTimeoutMs ?? 2000) },
    )) as { value?: unknown } | null;
    const value = JSON.stringify(read?.value ?? null);
    return `value ${createHash('sha256').update(value).digest('hex').slice(0, 12)}`;
  } catch {
    return undefined;
  }
}

/** The value a set_state writes, secrets redacted by the name of the key it lands on. */
function redactedAt(path: string, value: unknown): unknown {
  const key = path.split('.').at(-1) ?? path;
  return (redact({ [key]: value }) as Record<string, unknown>)[key];
}
/** Commands that answer from what the page shows, which it may keep from some agents (spec/page.md "Tools"). */
const CALLER_COMMANDS = new Set(['snapshot', 'screenshot', 'click', 'type', 'execute_action']);
/** Every page tool reaches a page outside the server. */
const OPEN_WORLD = { openWorldHint: true } as const;

function forward<S extends z.ZodType>(
  options: PageToolsOptions,
  def: {
    name: string;
    description: string;
    input: S;
    effect: Effect;
    /** Page actions may do anything the page allows: no non-destructive promise. */
    mayDestroy?: boolean;
    command?: (input: z.output<S>) => Failure | null;
    /** Decides the effect per call (page actions: destructive when the action asks to confirm). */
    effectOf?: (input: z.output<S>) => Promise<Effect>;
    /** The element, action or data the call is about, for the owner's preview. */
    about?: (input: z.output<S>) => Record<string, unknown>;
    /** The policy target after the origin (default: the tool's name). */
    target?: (input: z.output<S>) => string;
    /** A second target, the name as the caller gave it, when it differs from `target`. */
    targetAsGiven?: (input: z.output<S>) => string;
    /** The door's own refusal before the owner is asked (CallPolicySpec.check). */
    check?: () => Failure | null;
    /** The one thing the call acts on (CallPolicySpec.subject), without the origin. */
    subject?: (input: z.output<S>) => string | null;
    /** The state the owner judges (CallPolicySpec.observes). */
    observes?: (input: z.output<S>) => Promise<string | undefined>;
    /** See ToolDef.sameAs. */
    sameAs?: (args: unknown) => { tool: string; args: unknown } | null;
    /** The parameters sent to the page (default: the input as it is). */
    params?: (input: z.output<S>, ctx: ToolContext) => Record<string, unknown>;
  },
): AnyToolDef {
  const command = def.name.slice('wu_'.length);
  const origin = () => options.relay()?.origin() ?? 'no-page';
  return defineTool({
    name: def.name,
    description: def.description,
    input: def.input,
    effect: def.effectOf ?? def.effect,
    ...(def.effectOf ? { publishedEffect: def.effect } : {}),
    // A screenshot is image content, not text an agent reads token by token.
    ...(IMAGE_TOOLS.has(def.name) ? { tokenBudget: false as const } : {}),
    policy: {
      // authority.md §3: `<page origin>:<action name>`; other tools `<origin>:<tool>`.
      targets: (input: z.output<S>) => {
        const first = `${origin()}:${def.target?.(input) ?? def.name}`;
        const given = def.targetAsGiven ? `${origin()}:${def.targetAsGiven(input)}` : first;
        return given === first ? [first] : [first, given];
      },
      ...(def.check ? { check: def.check } : {}),
      ...(def.subject
        ? {
            subject: (input: z.output<S>) => {
              const about = def.subject!(input);
              return about === null ? null : `${about} on ${origin()}`;
            },
          }
        : {}),
      ...(def.observes ? { observes: def.observes } : {}),
      preview: (input: z.output<S>) => {
        const about = def.about ? def.about(input) : { arguments: redact(input) };
        // The summary is the line `approvals list` and the card lead with: what it touches.
        const touches = [about.label, about.element, about.path]
          .filter((v): v is string => typeof v === 'string')
          .map((v) => (v === about.label ? `(${JSON.stringify(v)})` : v));
        return {
          summary: `${def.name}${def.target ? ` ${def.target(input)}` : ''}${touches.length ? ` ${touches.join(' ')}` : ''} on ${origin()}`,
          page: origin(),
          ...about,
        };
      },
    },
    // WU publishes only readOnlyHint: false for actions, so destructiveHint reads as
    // MCP's default (true).
    ...(def.mayDestroy ? { statedHints: ['readOnlyHint'] as const } : {}),
    annotations: OPEN_WORLD,
    ...(def.sameAs ? { sameAs: def.sameAs } : {}),
    handler: async (input: z.output<S>, ctx: ToolContext) => {
      const refused = def.command?.(input) ?? null;
      if (refused) return refused;
      // The page is told which agent calls, so it can keep other agents' parts of it
      // (data-wu-agent) from this one; the schemas are strict, so an agent cannot name itself.
      const params = {
        ...(def.params ? def.params(input, ctx) : (input as Record<string, unknown>)),
        ...(ctx.connection.agent && CALLER_COMMANDS.has(command)
          ? { caller: ctx.connection.agent }
          : {}),
      };
      // The page joins the call's trace: W3C context in the request frame (spec/page.md §3).
      return sendCommand(
        options.relay(),
        options.config,
        command,
        params,
        ctx.signal,
        ctx.traceContext?.(),
      );
    },
  });
}

/**
 * What the page says of one of its actions: listed (with its `confirm`),
 * absent from a list the page gave, or unknown — no page, no answer within
 * the time allowed, an error. Unknown is never read as harmless.
 */
type ActionInfo =
  | { known: true; confirm: boolean; description: string }
  | { known: false; why: 'absent' }
  | { known: false; why: 'unknown'; reason: string };

async function actionInfo(options: PageToolsOptions, action: string): Promise<ActionInfo> {
  const relay = options.relay();
  if (!relay?.conectado())
    return { known: false, why: 'unknown', reason: 'no page is connected to say' };
  const ms = options.effectTimeoutMs ?? 2000;
  try {
    const listed = (await relay.enviar(
      'list_actions',
      {},
      { signal: AbortSignal.timeout(ms) },
    )) as {
      actions?: Array<{ name?: unknown; confirm?: unknown; description?: unknown }>;
    } | null;
    if (!Array.isArray(listed?.actions))
      return { known: false, why: 'unknown', reason: 'the page answered no action list' };
    const wanted = foldName(action);
    const found = listed.actions.find(
      (a) => typeof a.name === 'string' && foldName(a.name) === wanted,
    );
    return found
      ? {
          known: true,
          confirm: found.confirm === true,
          description: typeof found.description === 'string' ? found.description : '',
        }
      : { known: false, why: 'absent' };
  } catch {
    return {
      known: false,
      why: 'unknown',
      reason: `the page did not answer within ${ms} ms (busy, failing or gone)`,
    };
  }
}

/**
 * The bridge's built-in actions, by folded name, and the tool each one is
 * (one name for one capability): reached through `wu_execute_action`, the
 * call is decided, rated, audited and answered as that tool.
 */
const BUILT_IN_ACTIONS: Record<string, string> = {
  getstate: 'wu_get_state',
  setstate: 'wu_set_state',
  snapshot: 'wu_snapshot',
  click: 'wu_click',
  readevents: 'wu_list_events',
  readconsole: 'wu_console',
  navigate: 'wu_navigate',
  emitevent: 'wu_emit_event',
};

/** `wu_execute_action {action: "getState", params}` as the tool it is, or null. */
export function builtInTool(args: unknown): { tool: string; args: unknown } | null {
  if (args === null || typeof args !== 'object') return null;
  const { action, params } = args as { action?: unknown; params?: unknown };
  if (typeof action !== 'string') return null;
  const tool = Object.hasOwn(BUILT_IN_ACTIONS, foldName(action))
    ? BUILT_IN_ACTIONS[foldName(action)]
    : undefined;
  if (!tool) return null;
  return { tool, args: params === undefined ? {} : params };
}

/** Tools whose result carries a PNG (shown as MCP image content). */
export const IMAGE_TOOLS = new Set(['wu_screenshot']);

export function createPageTools(options: PageToolsOptions): AnyToolDef[] {
  return [
    conexionTool(options),
    listActionsTool(options),
    executeActionTool(options),
    statusTool(options),
    listAppsTool(options),
    listEventsTool(options),
    getStateTool(options),
    setStateTool(options),
    emitEventTool(options),
    navigateTool(options),
    snapshotTool(options),
    screenshotTool(options),
    clickTool(options),
    typeTool(options),
    consoleTool(options),
    networkTool(options),
    mountAppTool(options),
    unmountAppTool(options),
  ];
}

function conexionTool(options: PageToolsOptions): AnyToolDef {
  const { config } = options;
  return defineTool({
    name: 'wu_conexion',
    description: 'Relay state: port, host, whether a token is required and a page connected.',
    input: z.object({}).strict(),
    output: z.object({
      puerto: z.number(),
      host: z.string(),
      requiere_token: z.boolean(),
      app_conectada: z.boolean(),
    }),
    effect: 'read',
    annotations: OPEN_WORLD,
    handler: async () => {
      const relay = options.relay();
      return {
        puerto: relay?.address()?.port ?? config.port,
        host: config.host,
        requiere_token: config.token !== null,
        app_conectada: relay?.conectado() ?? false,
      };
    },
  });
}

function listActionsTool(options: PageToolsOptions): AnyToolDef {
  return forward(options, {
    name: 'wu_list_actions',
    description: 'The actions the page registered, with their parameters and permissions.',
    input: z.object({}).strict(),
    effect: 'read',
  });
}

function executeActionTool(options: PageToolsOptions): AnyToolDef {
  /** Calls whose effect the page could not tell, with why (for the owner's preview). */
  const unknownEffects = new WeakMap<object, string>();
  /** What the page says an action does (its description), for the owner's preview. */
  const actionLabels = new WeakMap<object, string>();
  return forward(options, {
    name: 'wu_execute_action',
    description:
      "Run a page action by name with params matching its schema. Needs executeActions and the action's permissions. An action that ran and failed answers success:false.",
    input: z.object({ action: name(200), params: z.record(z.string(), json).optional() }).strict(),
    // authority.md §3: an action registered with `confirm` is destructive. Only the
    // page knows which actions ask, so the door looks it up (list_actions) per call;
    // tools/list publishes the worst case.
    // When the page cannot say (busy, failing, gone), the call is destructive: asked,
    // never sent as a write on a guess. Decided once per call; a late answer changes nothing.
    effect: 'destructive',
    effectOf: async (input) => {
      const info = await actionInfo(options, input.action);
      if (!info.known && info.why === 'unknown') unknownEffects.set(input, info.reason);
      if (info.known && info.description) actionLabels.set(input, info.description);
      return info.known
        ? info.confirm
          ? 'destructive'
          : 'write'
        : info.why === 'unknown'
          ? 'destructive'
          : 'write';
    },
    // authority.md §3: the target is the action's folded name (look-alikes meet the
    // owner's rule), and the name as the page spelled it when that differs.
    target: ({ action }) => foldName(action),
    targetAsGiven: ({ action }) => action,
    about: (input) => ({
      action: input.action,
      ...(actionLabels.has(input) ? { label: bounded(actionLabels.get(input)!, 200) } : {}),
      parameters: redact(input.params ?? {}),
      ...(unknownEffects.has(input)
        ? {
            effectUnknown: `The page did not say whether '${input.action}' asks to confirm (${unknownEffects.get(input)}); it is treated as destructive.`,
          }
        : {}),
    }),
    mayDestroy: true,
    sameAs: builtInTool,
    // The owner never judges a call no page is there to run.
    check: () =>
      options.relay()?.conectado()
        ? null
        : failure('unavailable', 'No page is connected to the relay; open the page and retry.', {
            code: 'WU_MCP_NOT_CONNECTED',
          }),
  });
}

function statusTool(options: PageToolsOptions): AnyToolDef {
  return forward(options, {
    name: 'wu_status',
    description:
      'Page status: framework, apps, root store keys ([] without readStore), action and event counts.',
    input: z.object({}).strict(),
    effect: 'read',
  });
}

function listAppsTool(options: PageToolsOptions): AnyToolDef {
  return forward(options, {
    name: 'wu_list_apps',
    description: 'List the mountable apps the page registered, with their state.',
    input: z.object({}).strict(),
    effect: 'read',
  });
}

function listEventsTool(options: PageToolsOptions): AnyToolDef {
  return forward(options, {
    name: 'wu_list_events',
    description:
      'Recent page events (ring of 200), sensitive data redacted. Needs readDiagnostics.',
    input: z.object({ limit: z.number().int().min(1).max(200).default(20) }).strict(),
    effect: 'read',
  });
}

function getStateTool(options: PageToolsOptions): AnyToolDef {
  return forward(options, {
    name: 'wu_get_state',
    description:
      'Read the page store at a dot path (empty or absent = root), secrets redacted. Needs readStore.',
    input: z.object({ path: storePath(z.string().max(1000)).default('') }).strict(),
    effect: 'read',
  });
}

function setStateTool(options: PageToolsOptions): AnyToolDef {
  return forward(options, {
    name: 'wu_set_state',
    description: 'Write a value at a non-empty dot path of the page store. Needs writeStore.',
    input: z
      .object({ path: storePath(name(1000)), value: json })
      .strict()
      .refine((v) => 'value' in v, {
        message: "missing required field 'value'",
        path: ['value'],
      }),
    effect: 'write',
    about: ({ path, value }) => ({ path, value: redactedAt(path, value) }),
    subject: ({ path }) => `state ${path}`,
    // The value the owner saw at the path (when this agent's page lets it be read).
    observes: async ({ path }) => storeDigest(options, path),
  });
}

function emitEventTool(options: PageToolsOptions): AnyToolDef {
  return forward(options, {
    name: 'wu_emit_event',
    description:
      "Emit an event on the page's bus (wu:, system: and app: are reserved). Needs emitEvents.",
    input: z.object({ event: name(200), data: json.optional() }).strict(),
    effect: 'write',
    command: (i) =>
      isReservedEvent(i.event)
        ? failure(
            'malformedRequest',
            `Event '${i.event}' is in a reserved namespace (wu:, system:, app:); use your own prefix such as 'agent:'.`,
            { code: 'WU_RESERVED_EVENT' },
          )
        : null,
  });
}

function navigateTool(options: PageToolsOptions): AnyToolDef {
  return forward(options, {
    name: 'wu_navigate',
    description:
      "Ask the page's shell to navigate: emits shell:navigate (needs emitEvents), sets currentPath when writeStore is on; does not prove the page changed.",
    input: z.object({ route: name(2000) }).strict(),
    effect: 'write',
  });
}

function snapshotTool(options: PageToolsOptions): AnyToolDef {
  return forward(options, {
    name: 'wu_snapshot',
    description:
      'Accessibility tree of the page, an app or a selector, with a ref per element for wu_click/wu_type. maxChars bounds it; delta:true gives only what changed since the last snapshot. Needs readDOM.',
    input: z
      .object({
        appName: name(200).optional(),
        selector: name(1000).optional(),
        maxChars: z.number().int().min(1000).max(1_000_000).optional(),
        delta: z.boolean().optional(),
      })
      .strict(),
    effect: 'read',
    // The tree stops where the answer's token budget would (room left for url, title, note).
    params: (input, ctx) => ({
      ...input,
      maxChars: Math.min(input.maxChars ?? Infinity, ctx.resultChars - 4_000),
    }),
  });
}

function screenshotTool(options: PageToolsOptions): AnyToolDef {
  return forward(options, {
    name: 'wu_screenshot',
    description: 'PNG of the page or one element, with metadata. Needs readDOM.',
    input: z
      .object({ selector: name(1000).optional(), quality: z.number().min(0).max(1).default(0.8) })
      .strict(),
    effect: 'read',
  });
}

function clickTool(options: PageToolsOptions): AnyToolDef {
  return forward(options, {
    name: 'wu_click',
    description:
      'Click an element found by CSS selector, visible text, or a ref from wu_snapshot. Needs modifyDOM.',
    input: z
      .object({
        selector: name(1000).optional(),
        text: name(1000).optional(),
        ref: name(100).optional(),
      })
      .strict()
      .refine((v) => v.selector !== undefined || v.text !== undefined || v.ref !== undefined, {
        message: 'give one of selector, text or ref',
      }),
    effect: 'write',
    about: ({ selector, text, ref }) => ({ element: elementWords({ selector, text, ref }) }),
    subject: (input) => `element ${elementWords(input)}`,
  });
}

function typeTool(options: PageToolsOptions): AnyToolDef {
  return forward(options, {
    name: 'wu_type',
    description:
      'Type text into an input, textarea or contenteditable (selector or wu_snapshot ref); clear:true clears first, submit:true submits its form. Needs modifyDOM.',
    input: z
      .object({
        selector: name(1000).optional(),
        ref: name(100).optional(),
        text: z.string().max(100_000),
        clear: z.boolean().default(false),
        submit: z.boolean().default(false),
      })
      .strict()
      .refine((v) => v.selector !== undefined || v.ref !== undefined, {
        message: "missing required field 'selector' (or give a ref from wu_snapshot)",
        path: ['selector'],
      }),
    effect: 'write',
    about: ({ selector, ref, text, submit }) => ({
      element: elementWords({ selector, ref }),
      text: bounded(text, 200),
      submit,
    }),
    subject: (input) => `element ${elementWords({ selector: input.selector, ref: input.ref })}`,
  });
}

function consoleTool(options: PageToolsOptions): AnyToolDef {
  return forward(options, {
    name: 'wu_console',
    description: 'Recent console entries, sensitive data redacted. Needs readDiagnostics.',
    input: z
      .object({
        level: z.enum(['all', 'log', 'warn', 'error']).default('all'),
        limit: z.number().int().min(1).max(500).default(50),
      })
      .strict(),
    effect: 'read',
  });
}

function networkTool(options: PageToolsOptions): AnyToolDef {
  return forward(options, {
    name: 'wu_network',
    description:
      'Recent fetch/XHR metadata (method, redacted URL, status, duration). Needs readDiagnostics.',
    input: z
      .object({
        method: name(20).optional(),
        status: z.number().int().min(100).max(599).optional(),
        limit: z.number().int().min(1).max(500).default(50),
      })
      .strict(),
    effect: 'read',
  });
}

function mountAppTool(options: PageToolsOptions): AnyToolDef {
  return forward(options, {
    name: 'wu_mount_app',
    description:
      'Mount a registered app into a container (CSS selector, default its own). Needs modifyDOM.',
    input: z.object({ appName: name(200), container: name(1000).optional() }).strict(),
    effect: 'write',
  });
}

function unmountAppTool(options: PageToolsOptions): AnyToolDef {
  return forward(options, {
    name: 'wu_unmount_app',
    description: 'Unmount a mounted app. Needs modifyDOM.',
    input: z.object({ appName: name(200) }).strict(),
    effect: 'write',
  });
}
