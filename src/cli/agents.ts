/**
 * `airlock agents add|list|revoke` and `airlock owner rotate` (authority.md
 * §1). They act on the store directly (`--data DIR`: the store the folder
 * notes, else its SQLite store; or `--store URL`), so they work whether or
 * not a server runs; every server on the store sees the change at its next
 * call (the principals epoch).
 */
import { join, resolve } from 'node:path';
import { createEventBus } from '../kernel/events.js';
import { createAudit } from '../kernel/audit.js';
import { createPrincipals, newToken, type Principals } from '../kernel/principals.js';
import { openStore } from '../store/open.js';
import { parse, UsageError } from './args.js';
import { OWNER_TOKEN_FILE, writeSecret } from './credentials.js';

export const AGENTS_HELP = `Usage:
  airlock agents add NAME      make an agent; prints its token once, alone on stdout
  airlock agents list [--json] agents with when they were made or revoked (never tokens)
  airlock agents revoke NAME   revoke an agent: its token stops working, its sessions end

Options: --data DIR (default ./.airlock; its server's store when one ran there), --store URL (postgres://…), -h/--help`;

export const OWNER_HELP = `Usage:
  airlock owner rotate   replace the owner token: writes DATA/owner.token and signs every browser out

Options: --data DIR (default ./.airlock; its server's store when one ran there), --store URL (postgres://…), -h/--help`;

const OPTIONS = {
  data: { type: 'string' },
  store: { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

async function withPrincipals<T>(
  values: { data?: string | undefined; store?: string | undefined },
  fn: (
    principals: Principals,
    record: (tool: string, args: unknown) => Promise<void>,
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
    return await fn(createPrincipals({ store, events }), record);
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
      return withPrincipals(values, async (principals, record) => {
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
      return withPrincipals(values, async (principals, record) => {
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
  if (sub !== 'rotate') throw new UsageError(`owner: unknown subcommand '${sub}' (rotate)`);
  if (extra.length) throw new UsageError(`owner rotate: unexpected argument '${extra[0]}'`);
  return withPrincipals(values, async (principals, record) => {
    const token = newToken('ok_');
    const file = join(resolve(values.data ?? './.airlock'), OWNER_TOKEN_FILE);
    writeSecret(file, token);
    await principals.setOwnerToken(token);
    await record('owner.rotate', {});
    process.stdout.write(`New owner token written to ${file}; every browser is signed out.\n`);
    return 0;
  });
}
