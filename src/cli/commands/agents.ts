/**
 * `airlock agents add|list|revoke` and `airlock owner rotate` (authority.md
 * §1). They act on the store directly (`--data DIR`: the store the folder
 * notes, else its SQLite store; or `--store URL`), so they work whether or
 * not a server runs; every server on the store sees the change at its next
 * call (the principals epoch).
 */
import { join, resolve } from 'node:path';
import { createEventBus } from '../../kernel/events/events.js';
import { createAudit } from '../../kernel/audit/audit.js';
import { createPrincipals, newToken, type Principals } from '../../kernel/authority/principals.js';
import { openStore } from '../../store/open.js';
import type { Store } from '../../kernel/store.js';
import { createPresence, PASSKEYS } from '../../kernel/authority/presence.js';
import { decisionLink } from '../owner/owner-client.js';
import { parse, UsageError } from '../args.js';
import { OWNER_TOKEN_FILE, ownerTokenIn, writeSecret } from '../workspace/credentials.js';
import { readServerRecord } from '../server/server-record.js';

export const AGENTS_HELP = `Usage:
  airlock agents add NAME      make an agent; prints its token once, alone on stdout
  airlock agents list [--json] agents with when they were made or revoked (never tokens)
  airlock agents revoke NAME   revoke an agent: its token stops working, its sessions end

Options: --data DIR (default ./.airlock; its server's store when one ran there), --store URL (postgres://…), -h/--help`;

export const OWNER_HELP = `Usage:
  airlock owner rotate   replace the owner token: writes DATA/owner.token and signs every browser out
  airlock owner link     print a one-time sign-in link for the web UI (before a passkey is
                         enrolled; it works once, for 10 minutes)
  airlock owner reset    recovery, with the server stopped: forgets every passkey, signs every
                         browser out and writes a new DATA/owner.token; enrol a passkey again

Once a passkey is enrolled, rotate is a decision: the CLI prints the link to
take it in the browser instead.

Options: --data DIR (default ./.airlock; its server's store when one ran there), --store URL (postgres://…),
--url URL (owner link: the server's address, default http://localhost:7300), -h/--help`;

const OPTIONS = {
  data: { type: 'string' },
  store: { type: 'string' },
  url: { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

/**
 * In passkey mode (issue 25) the CLI takes no owner decision: it prints the
 * link that opens it in the browser, where the passkey approves it. Null
 * when the decision may go ahead.
 */
async function refusedWithoutPresence(store: Store, path: string): Promise<number | null> {
  if (!(await createPresence({ store }).required())) return null;
  process.stderr.write(
    `airlock: this decision needs your passkey; open ${decisionLink(process.env.AIRLOCK_URL ?? 'http://localhost:7300', path)} and take it there (the CLI does not decide in passkey mode).\n`,
  );
  return 1;
}

async function withPrincipals<T>(
  values: { data?: string | undefined; store?: string | undefined },
  fn: (
    principals: Principals,
    record: (tool: string, args: unknown) => Promise<void>,
    store: Store,
  ) => Promise<T>,
): Promise<T> {
  const data = resolve(values.data ?? './.airlock');
  const { store } = await openStore({ data, ...(values.store ? { store: values.store } : {}) });
  const events = await createEventBus();
  try {
    const audit = createAudit({ store });
    // Owner actions are audited as the owner (authority.md §3).
    const record = async (tool: string, args: unknown) => {
      await audit.ownerAction(tool, 'airlock', args);
    };
    return await fn(createPrincipals({ store, events }), record, store);
  } finally {
    await events.close();
    await store.close();
  }
}

export async function agentsCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parse({ args: argv, allowPositionals: true, options: OPTIONS });
  const [sub, name, ...extra] = positionals;
  if (values.help || !sub) {
    process.stdout.write(AGENTS_HELP + '\n');
    return values.help ? 0 : 2;
  }
  if (extra.length) throw new UsageError(`agents: unexpected argument '${extra[0]}'`);
  switch (sub) {
    case 'add': {
      if (!name) throw new UsageError('agents add: give the agent a NAME');
      return withPrincipals(values, async (principals, record, store) => {
        const refused = await refusedWithoutPresence(store, 'agents');
        if (refused !== null) return refused;
        const made = await principals.addAgent(name);
        if ('ok' in made) throw new UsageError(`agents add: ${made.message}`);
        await record('agents.add', { name });
        process.stdout.write(`${made.token}\n`);
        process.stderr.write(
          `Agent '${name}' made. Its token is printed above, once: give it to that MCP client as Authorization: Bearer <token>.\n`,
        );
        return 0;
      });
    }
    case 'list':
      return withPrincipals(values, async (principals) => {
        const agents = await principals.listAgents();
        if (values.json) process.stdout.write(JSON.stringify(agents, null, 2) + '\n');
        else if (agents.length === 0) process.stdout.write('No agents yet.\n');
        else
          for (const a of agents)
            process.stdout.write(
              `${a.name}  made ${new Date(a.createdAt).toISOString()}${a.revokedAt ? `  revoked ${new Date(a.revokedAt).toISOString()}` : ''}\n`,
            );
        return 0;
      });
    case 'revoke': {
      if (!name) throw new UsageError('agents revoke: give the agent NAME');
      return withPrincipals(values, async (principals, record, store) => {
        const refused = await refusedWithoutPresence(store, 'agents');
        if (refused !== null) return refused;
        const revoked = await principals.revokeAgent(name);
        if ('ok' in revoked) {
          process.stderr.write(`airlock: ${revoked.message}\n`);
          return 1;
        }
        await record('agents.revoke', { name });
        process.stdout.write(`Revoked agent '${name}'.\n`);
        return 0;
      });
    }
    default:
      throw new UsageError(`agents: unknown subcommand '${sub}' (add, list, revoke)`);
  }
}

export async function ownerCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parse({ args: argv, allowPositionals: true, options: OPTIONS });
  const [sub, ...extra] = positionals;
  if (values.help || !sub) {
    process.stdout.write(OWNER_HELP + '\n');
    return values.help ? 0 : 2;
  }
  if (extra.length) throw new UsageError(`owner ${sub}: unexpected argument '${extra[0]}'`);
  const data = resolve(values.data ?? './.airlock');
  const file = join(data, OWNER_TOKEN_FILE);
  switch (sub) {
    case 'rotate':
      return withPrincipals(values, async (principals, record, store) => {
        const refused = await refusedWithoutPresence(store, 'passkeys');
        if (refused !== null) return refused;
        const token = newToken('ok_');
        writeSecret(file, token);
        await principals.setOwnerToken(token);
        await record('owner.rotate', {});
        process.stdout.write(`New owner token written to ${file}; every browser is signed out.\n`);
        return 0;
      });
    case 'link':
      return withPrincipals(values, async (principals, _record, store) => {
        if (await createPresence({ store }).required()) {
          process.stderr.write(
            'airlock: a passkey is enrolled: sign in with it on the web UI (Sign in with a passkey); no link is made.\n',
          );
          return 1;
        }
        const token = ownerTokenIn(data);
        if (!token || !(await principals.isOwnerToken(token))) {
          process.stderr.write(
            `airlock: ${file} is not this store's owner token; no link is made.\n`,
          );
          return 1;
        }
        const base = new URL(values.url ?? process.env.AIRLOCK_URL ?? 'http://localhost:7300');
        if (base.hostname === '127.0.0.1') base.hostname = 'localhost';
        process.stdout.write(`${base.origin}/login#code=${await principals.issueLoginCode()}\n`);
        return 0;
      });
    case 'reset':
      return ownerReset(values, file);
    default:
      throw new UsageError(`owner: unknown subcommand '${sub}' (rotate, link, reset)`);
  }
}

/**
 * `airlock owner reset` (issue 25): the recovery when every passkey is lost.
 * With the server stopped, it forgets every passkey, ends every browser
 * session and writes a new owner token; the owner signs in with it (or a
 * link) and enrols a passkey again. Audited as the owner.
 */
async function ownerReset(
  values: { data?: string | undefined; store?: string | undefined },
  file: string,
): Promise<number> {
  const data = resolve(values.data ?? './.airlock');
  const server = readServerRecord(data);
  if (server) {
    process.stderr.write(
      `airlock: a server runs on ${data} (pid ${server.pid}, ${server.url}); stop it first (owner reset works only with the server stopped).\n`,
    );
    return 1;
  }
  return withPrincipals(values, async (principals, record, store) => {
    const forgotten = await store.transaction(async (tx) => {
      const rows = await tx.records.list(PASSKEYS);
      for (const r of rows) await tx.records.delete(PASSKEYS, r.key);
      return rows.length;
    });
    const token = newToken('ok_');
    writeSecret(file, token);
    await principals.setOwnerToken(token);
    await principals.endOwnerSessions();
    await record('owner.reset', { passkeysForgotten: forgotten });
    process.stdout.write(
      `Owner reset: ${forgotten} passkey(s) forgotten, every browser signed out, a new owner token written to ${file}.\nStart airlock serve, sign in with the printed link or that token, and enrol a passkey in Settings.\n`,
    );
    return 0;
  });
}
