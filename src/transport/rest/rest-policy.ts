/**
 * The owner's policy over REST (spec/authority.md §3), owner-only: list the
 * rules in evaluation order, add, edit, move and remove the owner's rules,
 * set read-only doors, and ask "what would happen" for a call. Every change
 * is audited as the owner and applies at once on every instance.
 */
import { z } from 'zod';
import type { Kernel } from '../../kernel/kernel.js';
import type { RestRoute } from '../surface.js';
import { validateInput } from '../../kernel/calls/validate.js';
import { effectOf } from '../../kernel/calls/effect.js';
import { connection } from '../../kernel/connection.js';
import { failure, type Failure } from '../../kernel/errors.js';
import {
  EFFECTS,
  PolicyRuleSchema,
  ReadOnlySchema,
  URGENT_ON_ASK,
  evaluate,
  urgentOnAsk,
} from '../../kernel/authority/policy.js';
import type { AnyToolDef, Effect } from '../../kernel/tool.js';

/** Each mounted door with the forms of its targets (`Door.targetForms`). */
export const policyTargets = (kernel: Kernel) =>
  kernel.doors().map((d) => ({
    door: d.name,
    mount: d.mount ?? d.name,
    targets: d.targetForms ?? [],
    tools: d.tools.map((t) => t.name),
  }));

type Audited = <T>(tool: string, door: string, args: unknown, run: () => Promise<T>) => Promise<T>;

const position = z.number().int().min(1);
/** `force`: keep a rule that can never match a mounted door's calls, with a warning. */
const force = z.boolean().optional();
const AddBody = PolicyRuleSchema.extend({ position: position.optional(), force })
  .strict()
  .refine(urgentOnAsk, URGENT_ON_ASK);
const UpdateBody = PolicyRuleSchema.extend({ force }).strict().refine(urgentOnAsk, URGENT_ON_ASK);
const MoveBody = z.object({ position }).strict();
const ReadOnlyBody = z.object({ readOnly: ReadOnlySchema }).strict();
export const PolicyTestBody = z
  .object({
    door: z.string().min(1),
    tool: z.string().min(1).optional(),
    agent: z.string().min(1).optional(),
    target: z.string().optional(),
    effect: z.enum(EFFECTS).optional(),
    /** The call's arguments: the tool's own effect and targets are derived from them. */
    args: z.record(z.string(), z.unknown()).optional(),
  })
  .strict();
export type PolicyTest = z.infer<typeof PolicyTestBody>;

/**
 * The decision the policy would make for a described call (no rate counted,
 * no approval looked up). Given a mounted tool, its effect and targets are
 * the tool's own for the arguments (`args`, default `{}`), as a real call
 * would have them; `effect` and `target` say them for a call not mounted here.
 */
export async function testPolicy(kernel: Kernel, test: PolicyTest) {
  const door = kernel
    .doors()
    .find((d) => (d.mount ?? d.name) === test.door || d.name === test.door);
  const mount = door ? (door.mount ?? door.name) : test.door;
  const tool = test.tool ? kernel.tool(mount, test.tool) : undefined;
  let effect: Effect | undefined = test.effect;
  let targets: readonly string[] = test.target !== undefined ? [test.target] : [];
  if (tool && (!effect || test.target === undefined)) {
    const derived = await derive(tool, test);
    if ('ok' in derived) return derived;
    effect ??= derived.effect;
    if (test.target === undefined) targets = derived.targets;
  }
  if (!effect)
    return failure(
      'malformedRequest',
      `Say the call's \`effect\` (read, write or destructive): ${test.tool ? `no tool '${test.tool}' is mounted on ${mount}` : 'no tool was named'} to take it from.`,
    );
  const view = await kernel.policy.view();
  const verdict = evaluate(view.rules, view.readOnly, {
    door: door?.name ?? test.door,
    mount,
    tool: test.tool ?? '',
    agent: test.agent ?? null,
    effect,
    targets,
  });
  return { ...verdict, effect, targets };
}

/** A mounted tool's effect and targets for the test's arguments, as its calls have them. */
async function derive(
  tool: AnyToolDef,
  test: PolicyTest,
): Promise<{ effect: Effect; targets: readonly string[] } | Failure> {
  const caller = connection(
    `policy-test:${test.agent ?? 'owner'}`,
    'internal',
    undefined,
    test.agent,
  );
  const parsed = validateInput(tool.input, test.args ?? {});
  if (parsed.ok) {
    const effect = await effectOf(tool, parsed.value);
    const targets = (await tool.policy?.targets?.(parsed.value, caller)) ?? [];
    return { effect, targets };
  }
  if (test.args !== undefined) return parsed;
  // No arguments given: only a tool whose effect and targets cannot depend on them is answered.
  const needArgs = failure(
    'malformedRequest',
    `${tool.name} decides its effect or targets from its arguments: give them as \`args\` (--args '{…}'), or say \`effect\` and \`target\`.`,
  );
  if (typeof tool.effect === 'function' || tool.policy?.targets) return needArgs;
  return { effect: tool.effect, targets: [] };
}

export function policyRoutes(kernel: Kernel, audited: Audited): RestRoute[] {
  return [
    {
      method: 'GET',
      path: 'policy',
      summary:
        "The owner's policy: rules in evaluation order (the config file's first), read-only doors, and the defaults",
      handler: async () => ({ status: 200, body: await kernel.policy.view() }),
    },
    {
      method: 'GET',
      path: 'policy/targets',
      summary:
        "The mounted doors and the forms of their calls' targets (what a rule's target can match)",
      handler: async () => ({ status: 200, body: { doors: policyTargets(kernel) } }),
    },
    {
      method: 'POST',
      path: 'policy/rules',
      decides: true,
      summary:
        'Add a rule {door?, tool?, agent?, effect?, target?, decision, reason?, rate?, origin?, position?} (globs; position is 1-based, default last)',
      handler: async ({ body }) => {
        const parsed = validateInput(AddBody, body ?? {});
        if (!parsed.ok) return parsed;
        const { position: at, force: forced, ...rule } = parsed.value;
        const added = await audited('policy.add', 'airlock', parsed.value, () =>
          kernel.policy.add(rule, at, { force: forced }),
        );
        return 'ok' in added ? added : { status: 201, body: added };
      },
    },
    {
      method: 'PUT',
      path: 'policy/rules/{id}',
      decides: true,
      summary: 'Replace an owner rule (same fields as adding one, without position)',
      handler: async ({ params, body }) => {
        const parsed = validateInput(UpdateBody, body ?? {});
        if (!parsed.ok) return parsed;
        const { force: forced, ...rule } = parsed.value;
        const updated = await audited(
          'policy.update',
          'airlock',
          { id: params.id, ...parsed.value },
          () => kernel.policy.update(params.id!, rule, { force: forced }),
        );
        return 'ok' in updated ? updated : { status: 200, body: updated };
      },
    },
    {
      method: 'POST',
      path: 'policy/rules/{id}/move',
      decides: true,
      summary: 'Move an owner rule to another place in the order {position}',
      handler: async ({ params, body }) => {
        const parsed = validateInput(MoveBody, body ?? {});
        if (!parsed.ok) return parsed;
        const moved = await audited(
          'policy.move',
          'airlock',
          { id: params.id, ...parsed.value },
          () => kernel.policy.move(params.id!, parsed.value.position),
        );
        return 'ok' in moved ? moved : { status: 200, body: moved };
      },
    },
    {
      method: 'DELETE',
      path: 'policy/rules/{id}',
      decides: true,
      summary: 'Remove an owner rule',
      handler: async ({ params }) => {
        const removed = await audited('policy.remove', 'airlock', { id: params.id }, () =>
          kernel.policy.remove(params.id!),
        );
        return 'ok' in removed ? removed : { status: 200, body: { removed } };
      },
    },
    {
      method: 'PUT',
      path: 'policy/read-only',
      decides: true,
      summary:
        'Make the workspace ({"readOnly": true}) or some doors ({"readOnly": ["scene"]}) read-only; false lifts it',
      handler: async ({ body }) => {
        const parsed = validateInput(ReadOnlyBody, body ?? {});
        if (!parsed.ok) return parsed;
        await audited('policy.readOnly', 'airlock', parsed.value, () =>
          kernel.policy.setReadOnly(parsed.value.readOnly),
        );
        return { status: 200, body: await kernel.policy.view() };
      },
    },
    {
      method: 'POST',
      path: 'policy/test',
      summary:
        "What would happen: the decision and the rule for a call {door, tool?, agent?, args?, target?, effect?} (a mounted tool's effect and targets come from args)",
      handler: async ({ body }) => {
        const parsed = validateInput(PolicyTestBody, body ?? {});
        if (!parsed.ok) return parsed;
        const verdict = await testPolicy(kernel, parsed.value);
        return 'ok' in verdict ? verdict : { status: 200, body: verdict };
      },
    },
  ];
}
