/** `airlock approvals …`: answer consent requests from a terminal over the REST API. */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parse, UsageError } from './args.js';
import { ownerTokenIn } from './credentials.js';

export const APPROVALS_HELP = `Usage:
  airlock approvals list [--json]             pending requests
  airlock approvals approve ID --project P    approve, choosing the project (id or name) the grant covers
  airlock approvals deny ID                   deny
  airlock approvals verify-receipt FILE       check a receipt's ownerProofSHA256 (JSON file)

Options: --url URL (default http://127.0.0.1:7300); as the owner: --data DIR (reads
DIR/owner.token; default ./.airlock) or --owner-token T (or AIRLOCK_OWNER_TOKEN); -h/--help`;

interface Client {
  call(
    method: string,
    path: string,
    body?: unknown,
  ): Promise<{ status: number; body: Record<string, unknown> }>;
}

function client(url: string, token: string | undefined): Client {
  return {
    async call(method, path, body) {
      let res: Response;
      try {
        res = await fetch(new URL(`/api/v1/${path}`, url), {
          method,
          headers: {
            ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
            ...(token ? { authorization: `Bearer ${token}` } : {}),
          },
          ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
        });
      } catch {
        throw new Error(
          `cannot reach the Airlock server at ${url}; start it with 'airlock serve' or pass --url`,
        );
      }
      const text = await res.text();
      let parsed: Record<string, unknown>;
      try {
        parsed = text ? (JSON.parse(text) as Record<string, unknown>) : {};
      } catch {
        parsed = { message: text };
      }
      return { status: res.status, body: parsed };
    },
  };
}

export async function approvals(argv: string[]): Promise<number> {
  const { values, positionals } = parse({
    args: argv,
    allowPositionals: true,
    options: {
      json: { type: 'boolean' },
      project: { type: 'string' },
      url: { type: 'string' },
      data: { type: 'string' },
      'owner-token': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  const [sub, arg] = positionals;
  if (values.help || !sub) {
    process.stdout.write(APPROVALS_HELP + '\n');
    return values.help ? 0 : 2;
  }
  // Only the owner answers approvals (authority.md §2): the owner token, never an agent's.
  const api = client(
    values.url ?? 'http://127.0.0.1:7300',
    values['owner-token'] ??
      process.env.AIRLOCK_OWNER_TOKEN ??
      ownerTokenIn(resolve(values.data ?? './.airlock')) ??
      undefined,
  );
  const fail = (r: { status: number; body: Record<string, unknown> }) => {
    process.stderr.write(`airlock: ${String(r.body.message ?? `HTTP ${r.status}`)}\n`);
    return 1;
  };
  switch (sub) {
    case 'list': {
      const r = await api.call('GET', 'approvals');
      if (r.status !== 200) return fail(r);
      const list = (r.body.approvals ?? []) as Array<Record<string, unknown>>;
      if (values.json) process.stdout.write(JSON.stringify(list, null, 2) + '\n');
      else if (list.length === 0) process.stdout.write('No pending approvals.\n');
      else
        for (const a of list)
          process.stdout.write(
            `${String(a.id)}  ${String(a.door)}/${String(a.capability)}  ${String(a.summary)}  (${new Date(Number(a.createdAt)).toISOString()})\n`,
          );
      return 0;
    }
    case 'approve': {
      if (!arg) throw new UsageError('approvals approve: give the approval ID');
      const r = await api.call(
        'POST',
        `approvals/${encodeURIComponent(arg)}/approve`,
        values.project ? { resource: values.project } : {},
      );
      if (r.status !== 200) return fail(r);
      process.stdout.write(`Approved ${arg}${values.project ? ` for ${values.project}` : ''}.\n`);
      return 0;
    }
    case 'deny': {
      if (!arg) throw new UsageError('approvals deny: give the approval ID');
      const r = await api.call('POST', `approvals/${encodeURIComponent(arg)}/deny`);
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
}
