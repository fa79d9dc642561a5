/** `airlock approvals …`: answer consent requests from a terminal over the REST API. */
import { readFileSync } from 'node:fs';
import { parse, UsageError } from '../args.js';
import { OWNER_OPTIONS, OWNER_OPTIONS_HELP, ownerClient } from '../owner/owner-client.js';
import { readablePreview } from '../../web/app/preview.js';

export const APPROVALS_HELP = `Usage:
  airlock approvals list [--json]             pending requests
  airlock approvals approve ID --project P    approve a consent request, choosing the project (id or name)
  airlock approvals approve ID [--scope S]    approve a policy ask: once (default; that exact call runs once)
                                              or 15m (this rule, agent and target for 15 minutes)
                                              or 15m-subject (that, only the same file/note/page)
  airlock approvals deny ID [--reason R]      deny; the agent sees the reason
  airlock approvals verify-receipt FILE       check a receipt's ownerProofSHA256 (JSON file)

${OWNER_OPTIONS_HELP}`;

export async function approvals(argv: string[]): Promise<number> {
  const { values, positionals } = parse({
    args: argv,
    allowPositionals: true,
    options: {
      json: { type: 'boolean' },
      project: { type: 'string' },
      scope: { type: 'string' },
      reason: { type: 'string' },
      ...OWNER_OPTIONS,
    },
  });
  const [sub, arg] = positionals;
  if (values.help || !sub) {
    process.stdout.write(APPROVALS_HELP + '\n');
    return values.help ? 0 : 2;
  }
  // Only the owner answers approvals (authority.md §2): the owner token, never an agent's.
  const { api, fail, answeredBy } = ownerClient(values);
  try {
    switch (sub) {
      case 'list': {
        const r = await api.call('GET', 'approvals');
        if (r.status !== 200) return fail(r);
        const list = (r.body.approvals ?? []) as Array<Record<string, unknown>>;
        if (values.json) {
          process.stderr.write(`airlock: answered by ${answeredBy()}\n`);
          process.stdout.write(JSON.stringify(list, null, 2) + '\n');
          return 0;
        }
        process.stdout.write(`Answered by ${answeredBy()}.\n`);
        if (list.length === 0) process.stdout.write('No pending approvals.\n');
        for (const a of list) process.stdout.write(approvalLines(a));
        return 0;
      }
      case 'approve': {
        if (!arg) throw new UsageError('approvals approve: give the approval ID');
        const scope = values.scope;
        if (scope !== undefined && scope !== 'once' && scope !== '15m' && scope !== '15m-subject')
          throw new UsageError(`--scope must be once, 15m or 15m-subject; got '${scope}'`);
        const r = await api.call('POST', `approvals/${encodeURIComponent(arg)}/approve`, {
          ...(values.project ? { resource: values.project } : {}),
          ...(scope ? { scope } : {}),
        });
        if (r.status !== 200) return fail(r, 'approvals');
        const how = values.project
          ? ` for ${values.project}`
          : r.body.kind === 'policy'
            ? r.body.scope === '15m'
              ? ' for 15 minutes (this rule, agent and target)'
              : r.body.scope === '15m-subject'
                ? ` for 15 minutes, only ${String((r.body.preview as { subject?: unknown } | null)?.subject ?? 'this subject')} (this rule, agent, target and subject)`
                : ' once (that exact call may run once)'
            : '';
        process.stdout.write(`Approved ${arg}${how}.\n`);
        return 0;
      }
      case 'deny': {
        if (!arg) throw new UsageError('approvals deny: give the approval ID');
        const r = await api.call(
          'POST',
          `approvals/${encodeURIComponent(arg)}/deny`,
          values.reason ? { reason: values.reason } : {},
        );
        if (r.status !== 200) return fail(r);
        process.stdout.write(`Denied ${arg}.\n`);
        return 0;
      }
      case 'verify-receipt': {
        if (!arg) throw new UsageError('approvals verify-receipt: give the receipt JSON file');
        let receipt: unknown;
        try {
          receipt = JSON.parse(readFileSync(arg, 'utf8'));
        } catch {
          throw new UsageError(`verify-receipt: '${arg}' is not a readable JSON file`);
        }
        const r = await api.call('POST', 'notes/receipts/verify', receipt);
        if (
          r.status === 404 &&
          r.body.code === 'notFound' &&
          String(r.body.message).includes('No route')
        ) {
          process.stderr.write(
            'airlock: this server has no notes door mounted, so it cannot verify receipts\n',
          );
          return 1;
        }
        if (r.status !== 200) return fail(r);
        const valid = r.body.valid === true;
        process.stdout.write(
          valid
            ? 'Receipt is valid: signed by this workspace.\n'
            : 'Receipt is NOT valid for this workspace.\n',
        );
        return valid ? 0 : 1;
      }
      default:
        throw new UsageError(
          `approvals: unknown subcommand '${sub}' (list, approve, deny, verify-receipt)`,
        );
    }
  } finally {
    await api.close();
  }
}

/** How many of a preview's details `approvals list` shows, and how wide. */
const PREVIEW_LINES = 4;
const LINE_WIDTH = 100;

/** One pending approval: its id, what asks, and the first lines of its preview. */
function approvalLines(a: Record<string, unknown>): string {
  const what =
    a.kind === 'policy'
      ? `${String(a.door)}/${String(a.tool)}  policy ask (rule ${String(a.rule)})`
      : `${String(a.door)}/${String(a.capability)}  consent`;
  const { summary, details } = readablePreview(a.preview, String(a.summary));
  const cut = (text: string) =>
    text.length > LINE_WIDTH ? `${text.slice(0, LINE_WIDTH - 1)}…` : text;
  const lines = details
    .slice(0, PREVIEW_LINES)
    .map((d) => `    ${d.label}: ${cut(d.text.replace(/\s*\n\s*/g, ' '))}`);
  const more =
    details.length > PREVIEW_LINES ? [`    … ${details.length - PREVIEW_LINES} more`] : [];
  return [
    `${String(a.id)}  ${what}  (${new Date(Number(a.createdAt)).toISOString()})`,
    `    ${cut(summary)}`,
    ...lines,
    ...more,
  ]
    .map((l) => l + '\n')
    .join('');
}
