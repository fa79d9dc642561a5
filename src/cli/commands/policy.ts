/**
 * `airlock policy …`: the owner's rules (spec/authority.md §3) from a
 * terminal, over the running server's owner REST routes.
 *
 *   airlock policy list [--json]
 *   airlock policy add DECISION [DOOR[:TARGET]] [--tool T] [--agent A] [--effect E]
 *                      [--target X] [--reason R] [--rate N/minute] [--position N] [--force]
 *   airlock policy remove N|ID
 *   airlock policy test --door D [--tool T] [--agent A] [--args JSON] [--target X] [--effect E]
 *   airlock policy read-only (on|off|DOOR,…)
 */
import { parse, UsageError } from '../args.js';
import { OWNER_OPTIONS, OWNER_OPTIONS_HELP, ownerClient } from '../owner/owner-client.js';
import { readShorthand } from '../../kernel/authority/rule-targets.js';

/** A mounted door and its target forms, as `GET /api/v1/policy/targets` lists them. */
interface ServedTargets {
  door: string;
  mount: string;
  targets: string[];
  tools: string[];
}

export const POLICY_HELP = `Usage:
  airlock policy list [--json]                 the rules in evaluation order (first match wins), then the defaults
  airlock policy add DECISION [DOOR[:TARGET]]  add a rule: DECISION is allow, ask or deny; e.g.
                                               airlock policy add deny page:*:submit_order --reason "never order"
                                               airlock policy add deny fs:write_file   (fs an mcp upstream: door mcp,
                                               target fs:write_file, since the upstream's targets are fs:<tool>)
      [--door D] [--tool T] [--agent A] [--effect read|write|destructive] [--target X]
      [--reason R] [--rate N/second|N/minute|N/hour] [--position N] [--force]
                                               match fields are globs (* and ?); a left-out one matches anything.
                                               A rule whose tool or target can match no call of a mounted door it
                                               names is refused with that door's target forms; --force keeps it
                                               anyway, with a warning
  airlock policy remove N|ID                   remove the rule at position N (as listed) or with that id
  airlock policy test --door D [--tool T] [--agent A] [--args JSON] [--target X] [--effect E]
                                               print the decision (allow, ask or deny), the rule that makes it and
                                               the call's effect and targets; for a mounted tool they are the
                                               tool's own for --args (e.g. --args '{"path": "/etc/passwd"}'),
                                               unless --effect / --target say them
  airlock policy read-only on|off|DOOR,…       make the workspace or some doors read-only (off lifts it)

Targets (docs/spec/authority.md §3): openapi <prefix>:<resource>.<method> and "<METHOD> <path>", page <origin>:<action>,
scene <op kind> (add_page, remove_node, …), pipeline:<step> or export:<format>, notes <capability>:<project>,
mcp <upstream>:<tool>. GET /api/v1/policy/targets lists the mounted doors' forms.
Defaults: read → allow, write → allow, destructive → ask.

${OWNER_OPTIONS_HELP}`;

interface Rule {
  id: string;
  position: number;
  source: string;
  door?: string;
  tool?: string;
  agent?: string;
  effect?: string;
  target?: string;
  decision: string;
  reason?: string;
  rate?: string;
}

/** One line per rule: position, decision, the match fields that are set, rate and reason. */
export function formatRule(r: Rule): string {
  const match = (['door', 'tool', 'agent', 'effect', 'target'] as const)
    .filter((k) => r[k] !== undefined)
    .map((k) => `${k}=${r[k]!}`)
    .join(' ');
  return [
    `${String(r.position).padStart(3)}. ${r.decision.padEnd(5)}`,
    match || '(any call)',
    r.rate ? `rate ${r.rate}` : '',
    r.reason ? `— ${r.reason}` : '',
    `[${r.source === 'config' ? 'config file' : r.id}]`,
  ]
    .filter(Boolean)
    .join('  ');
}

type PolicyValues = ReturnType<typeof parsePolicyArgs>['values'];

/** What each subcommand works with: the parsed options, the owner API and its failure printer. */
interface PolicyCtx {
  values: PolicyValues;
  args: string[];
  api: ReturnType<typeof ownerClient>['api'];
  fail: ReturnType<typeof ownerClient>['fail'];
}

function parsePolicyArgs(argv: string[]) {
  return parse({
    args: argv,
    allowPositionals: true,
    options: {
      json: { type: 'boolean' },
      door: { type: 'string' },
      tool: { type: 'string' },
      agent: { type: 'string' },
      effect: { type: 'string' },
      target: { type: 'string' },
      reason: { type: 'string' },
      rate: { type: 'string' },
      position: { type: 'string' },
      force: { type: 'boolean' },
      args: { type: 'string' },
      ...OWNER_OPTIONS,
    },
  });
}

/** The rule-matching options given (`--door`, `--tool`, `--agent`, `--effect`, `--target`). */
const matchFields = (values: PolicyValues) => ({
  ...(values.door ? { door: values.door } : {}),
  ...(values.tool ? { tool: values.tool } : {}),
  ...(values.agent ? { agent: values.agent } : {}),
  ...(values.effect ? { effect: values.effect } : {}),
  ...(values.target !== undefined ? { target: values.target } : {}),
});

/** `policy list`: the rules in order, then the defaults. */
async function listRules({ values, api, fail }: PolicyCtx): Promise<number> {
  const r = await api.call('GET', 'policy');
  if (r.status !== 200) return fail(r);
  if (values.json) {
    process.stdout.write(JSON.stringify(r.body, null, 2) + '\n');
    return 0;
  }
  const rules = (r.body.rules ?? []) as Rule[];
  const readOnly = r.body.readOnly as boolean | string[];
  if (readOnly === true) process.stdout.write('Read-only: the whole workspace\n');
  else if (Array.isArray(readOnly) && readOnly.length)
    process.stdout.write(`Read-only: ${readOnly.join(', ')}\n`);
  if (rules.length === 0) process.stdout.write('No rules; the defaults decide every call.\n');
  for (const rule of rules) process.stdout.write(formatRule(rule) + '\n');
  process.stdout.write('Then: read → allow, write → allow, destructive → ask.\n');
  return 0;
}

/** `policy add DECISION [WHERE]`: a rule at the end (or `--position`). */
async function addRule({ values, args, api, fail }: PolicyCtx): Promise<number> {
  const [decision, where] = args;
  if (!decision) throw new UsageError('policy add: give the decision (allow, ask or deny)');
  const body: Record<string, unknown> = { decision, ...matchFields(values) };
  if (where) {
    // `page:*:submit_order` → door page, target `*:submit_order`; `fs:write_file`, with
    // an upstream fs → door mcp, target `fs:write_file` (the reading that can match).
    const targets = await api.call('GET', 'policy/targets');
    const doors = targets.status === 200 ? (targets.body.doors as ServedTargets[]) : [];
    const read = readShorthand(
      where,
      doors.map((d) => ({ ...d, name: d.door, targetForms: d.targets })),
    );
    if (values.door && values.door !== read.door && !where.startsWith(`${values.door}:`))
      throw new UsageError(
        `policy add: '${where}' names door ${read.door} but --door is ${values.door}`,
      );
    body.door = read.door;
    if (read.target !== undefined) {
      if (values.target !== undefined)
        throw new UsageError(`policy add: give the target once ('${where}' or --target)`);
      body.target = read.target;
    }
  }
  if (values.force) body.force = true;
  if (values.reason !== undefined) body.reason = values.reason;
  if (values.rate !== undefined) body.rate = values.rate;
  if (values.position !== undefined) {
    const n = Number(values.position);
    if (!Number.isInteger(n) || n < 1)
      throw new UsageError(`--position must be a whole number ≥ 1; got '${values.position}'`);
    body.position = n;
  }
  const r = await api.call('POST', 'policy/rules', body);
  if (r.status !== 201) return fail(r, 'policy');
  process.stdout.write(`Added ${formatRule(r.body as unknown as Rule)}\n`);
  if (typeof r.body.warning === 'string')
    process.stderr.write(`airlock: warning: ${r.body.warning}\n`);
  return 0;
}

/** `policy remove N|ID`: the rule at a listed position, or by id. */
async function removeRule({ args, api, fail }: PolicyCtx): Promise<number> {
  const [which] = args;
  if (!which) throw new UsageError('policy remove: give the rule position (as listed) or id');
  let id = which;
  if (/^\d+$/.test(which)) {
    const listed = await api.call('GET', 'policy');
    if (listed.status !== 200) return fail(listed);
    const rule = ((listed.body.rules ?? []) as Rule[]).find((x) => x.position === Number(which));
    if (!rule) {
      process.stderr.write(
        `airlock: no rule at position ${which}; 'airlock policy list' shows them\n`,
      );
      return 1;
    }
    id = rule.id;
  }
  const r = await api.call('DELETE', `policy/rules/${encodeURIComponent(id)}`);
  if (r.status !== 200) return fail(r, 'policy');
  process.stdout.write(`Removed ${formatRule(r.body.removed as Rule)}\n`);
  return 0;
}

/** `policy test`: what the policy would decide for a call, and by which rule. */
async function testCall({ values, api, fail }: PolicyCtx): Promise<number> {
  if (!values.door)
    throw new UsageError('policy test: give --door (and --tool, --agent, --args, --target)');
  let callArgs: unknown;
  if (values.args !== undefined) {
    try {
      callArgs = JSON.parse(values.args) as unknown;
    } catch {
      callArgs = undefined;
    }
    if (callArgs === null || typeof callArgs !== 'object' || Array.isArray(callArgs))
      throw new UsageError(
        `--args must be a JSON object of the call's arguments, e.g. '{"path": "/tmp/x"}'; got '${values.args}'`,
      );
  }
  const r = await api.call('POST', 'policy/test', {
    ...matchFields(values),
    ...(callArgs !== undefined ? { args: callArgs } : {}),
  });
  if (r.status !== 200) return fail(r);
  if (values.json) {
    process.stdout.write(JSON.stringify(r.body, null, 2) + '\n');
    return 0;
  }
  const matched = r.body.matched as Rule | null;
  const by = matched ? formatRule(matched) : String(r.body.rule);
  const reason = r.body.reason ? ` (${String(r.body.reason)})` : '';
  const targets = (r.body.targets as string[] | undefined) ?? [];
  const call = `${String(r.body.effect)}${targets.length ? ` on ${targets.join(', ')}` : ''}`;
  process.stdout.write(`${String(r.body.decision)}  by ${by}${reason}  [${call}]\n`);
  return 0;
}

/** `policy read-only on|off|DOORS`. */
async function setReadOnly({ args, api, fail }: PolicyCtx): Promise<number> {
  const [value] = args;
  if (!value) throw new UsageError('policy read-only: give on, off or a list of doors');
  const readOnly =
    value === 'on' ? true : value === 'off' ? false : value.split(',').filter(Boolean);
  const r = await api.call('PUT', 'policy/read-only', { readOnly });
  if (r.status !== 200) return fail(r, 'policy');
  const now = r.body.readOnly as boolean | string[];
  process.stdout.write(
    `Read-only: ${now === true ? 'the whole workspace' : Array.isArray(now) && now.length ? now.join(', ') : 'nothing'}\n`,
  );
  return 0;
}

export async function policyCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parsePolicyArgs(argv);
  const [sub, ...args] = positionals;
  if (values.help || !sub) {
    process.stdout.write(POLICY_HELP + '\n');
    return values.help ? 0 : 2;
  }
  const subcommands: Record<string, (ctx: PolicyCtx) => Promise<number>> = {
    list: listRules,
    add: addRule,
    remove: removeRule,
    test: testCall,
    'read-only': setReadOnly,
  };
  const run = Object.hasOwn(subcommands, sub) ? subcommands[sub] : undefined;
  if (!run)
    throw new UsageError(
      `policy: unknown subcommand '${sub}'; try list, add, remove, test or read-only`,
    );
  const { api, fail } = ownerClient(values);
  try {
    return await run({ values, args, api, fail });
  } finally {
    await api.close();
  }
}
