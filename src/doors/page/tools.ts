/**
 * The 18 `wu_*` tools (spec/page.md "Tools"), as kernel tools. Each forwards
 * a bridge command (`wu_list_actions` → `list_actions`) through the relay;
 * the page checks its own permission flags and answers. Argument names,
 * ranges and defaults follow the reference so WU prompts work unchanged.
 */
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

export interface PageToolsOptions {
  /** The relay; null while it is not listening. */
  relay: () => CommandSender | null;
  config: RelayConfig;
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
      targets: (input: z.output<S>) => [`${origin()}:${def.target?.(input) ?? def.name}`],
      preview: (input: z.output<S>) => ({
        summary: `${def.name}${def.target ? ` ${def.target(input)}` : ''} on ${origin()}`,
        page: origin(),
        ...(def.about ? def.about(input) : { arguments: redact(input) }),
      }),
    },
    // WU publishes only readOnlyHint: false for actions, so destructiveHint reads as
    // MCP's default (true).
    ...(def.mayDestroy ? { statedHints: ['readOnlyHint'] as const } : {}),
    annotations: OPEN_WORLD,
    handler: async (input: z.output<S>, ctx: ToolContext) => {
      const refused = def.command?.(input) ?? null;
      if (refused) return refused;
      const params = def.params ? def.params(input, ctx) : input;
      return sendCommand(options.relay(), options.config, command, params, ctx.signal);
    },
  });
}

/**
 * What the page says of one of its actions (name, confirm, …), or null when
 * no page answers or it has no such action. Bounded: a page that does not
 * answer in 2 s is treated as having no such action.
 */
async function actionInfo(
  options: PageToolsOptions,
  action: string,
): Promise<{ name: string; confirm?: boolean } | null> {
  const relay = options.relay();
  if (!relay?.conectado()) return null;
  try {
    const listed = (await relay.enviar(
      'list_actions',
      {},
      { signal: AbortSignal.timeout(2000) },
    )) as {
      actions?: Array<{ name?: unknown; confirm?: unknown }>;
    } | null;
    const found = listed?.actions?.find((a) => a.name === action);
    return found ? { name: action, confirm: found.confirm === true } : null;
  } catch {
    return null;
  }
}

/** Tools whose result carries a PNG (shown as MCP image content). */
export const IMAGE_TOOLS = new Set(['wu_screenshot']);

export function createPageTools(options: PageToolsOptions): AnyToolDef[] {
  const { config } = options;
  const conexion = defineTool({
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

  const tools: AnyToolDef[] = [
    conexion,
    forward(options, {
      name: 'wu_list_actions',
      description: 'The actions the page registered, with their parameters and permissions.',
      input: z.object({}).strict(),
      effect: 'read',
    }),
    forward(options, {
      name: 'wu_execute_action',
      description:
        "Run a page action by name with params matching its schema. Needs executeActions and the action's permissions. An action that ran and failed answers success:false.",
      input: z
        .object({ action: name(200), params: z.record(z.string(), json).optional() })
        .strict(),
      // authority.md §3: an action registered with `confirm` is destructive. Only the
      // page knows which actions ask, so the door looks it up (list_actions) per call;
      // tools/list publishes the worst case.
      effect: 'destructive',
      effectOf: async ({ action }) =>
        (await actionInfo(options, action))?.confirm ? 'destructive' : 'write',
      target: ({ action }) => action,
      about: ({ action, params }) => ({ action, parameters: redact(params ?? {}) }),
      mayDestroy: true,
    }),
    forward(options, {
      name: 'wu_status',
      description:
        'Page status: framework, apps, root store keys ([] without readStore), action and event counts.',
      input: z.object({}).strict(),
      effect: 'read',
    }),
    forward(options, {
      name: 'wu_list_apps',
      description: 'List the mountable apps the page registered, with their state.',
      input: z.object({}).strict(),
      effect: 'read',
    }),
    forward(options, {
      name: 'wu_list_events',
      description:
        'Recent page events (ring of 200), sensitive data redacted. Needs readDiagnostics.',
      input: z.object({ limit: z.number().int().min(1).max(200).default(20) }).strict(),
      effect: 'read',
    }),
    forward(options, {
      name: 'wu_get_state',
      description:
        'Read the page store at a dot path (empty or absent = root), secrets redacted. Needs readStore.',
      input: z.object({ path: storePath(z.string().max(1000)).default('') }).strict(),
      effect: 'read',
    }),
    forward(options, {
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
    }),
    forward(options, {
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
    }),
    forward(options, {
      name: 'wu_navigate',
      description:
        "Ask the page's shell to navigate: emits shell:navigate (needs emitEvents), sets currentPath when writeStore is on; does not prove the page changed.",
      input: z.object({ route: name(2000) }).strict(),
      effect: 'write',
    }),
    forward(options, {
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
    }),
    forward(options, {
      name: 'wu_screenshot',
      description: 'PNG of the page or one element, with metadata. Needs readDOM.',
      input: z
        .object({ selector: name(1000).optional(), quality: z.number().min(0).max(1).default(0.8) })
        .strict(),
      effect: 'read',
    }),
    forward(options, {
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
      about: ({ selector, text, ref }) => ({ element: { selector, text, ref } }),
    }),
    forward(options, {
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
        element: { selector, ref },
        text: text.length > 200 ? `${text.slice(0, 200)}…` : text,
        submit,
      }),
    }),
    forward(options, {
      name: 'wu_console',
      description: 'Recent console entries, sensitive data redacted. Needs readDiagnostics.',
      input: z
        .object({
          level: z.enum(['all', 'log', 'warn', 'error']).default('all'),
          limit: z.number().int().min(1).max(500).default(50),
        })
        .strict(),
      effect: 'read',
    }),
    forward(options, {
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
    }),
    forward(options, {
      name: 'wu_mount_app',
      description:
        'Mount a registered app into a container (CSS selector, default its own). Needs modifyDOM.',
      input: z.object({ appName: name(200), container: name(1000).optional() }).strict(),
      effect: 'write',
    }),
    forward(options, {
      name: 'wu_unmount_app',
      description: 'Unmount a mounted app. Needs modifyDOM.',
      input: z.object({ appName: name(200) }).strict(),
      effect: 'write',
    }),
  ];
  return tools;
}
