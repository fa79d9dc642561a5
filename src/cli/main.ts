/** The `airlock` command: dispatch to subcommands; usage errors exit 2 with one line. */
import { AIRLOCK_VERSION } from '../kernel/version.js';
import { UsageError } from './args.js';

// Subcommands load on demand, so `--help` and `approvals` start fast.

export const HELP = `Usage: airlock <command> [options]

Commands:
  serve        run the workspace (HTTP: MCP, REST, events, web UI) on embedded storage
  stdio        serve doors over MCP stdio, for clients that spawn servers
  approvals    list, approve or deny consent requests and policy asks; verify receipts
  policy       the owner's rules: list, add, remove, test (allow, ask or deny each call)
  agents       add, list or revoke agents (each MCP client's token)
  owner        owner rotate: replace the owner token
  audit        verify the audit trail's hash chain, export it signed, check a signed export
  mcp          put existing MCP servers behind Airlock: mcp NAME=COMMAND… (stdio or --port)
  openapi      serve one REST API (OpenAPI/Swagger document) through three generic tools
  catalog      compile an OpenAPI document into a catalog: catalog build SPEC -o FILE
  relay        the page door alone: MCP over stdio plus the bridge WebSocket (WU_MCP_* env)

Run 'airlock <command> --help' for a command's options.`;

export async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  // Everything Airlock writes (data folder, database, blobs, tokens) is the owner's
  // alone, whatever umask the shell had (authority.md §4).
  process.umask(0o077);
  try {
    switch (command) {
      case 'serve':
        return await (await import('./commands/serve.js')).serve(rest);
      case 'stdio':
        return await (await import('./commands/serve.js')).stdio(rest);
      case 'approvals':
        return await (await import('./commands/approvals.js')).approvals(rest);
      case 'policy':
        return await (await import('./commands/policy.js')).policyCommand(rest);
      case 'agents':
        return await (await import('./commands/agents.js')).agentsCommand(rest);
      case 'owner':
        return await (await import('./commands/agents.js')).ownerCommand(rest);
      case 'audit':
        return await (await import('./commands/audit.js')).auditCommand(rest);
      case 'openapi':
        return await (await import('./commands/openapi.js')).openapiCommand(rest);
      case 'mcp':
        return await (await import('./commands/mcp.js')).mcpCommand(rest);
      case 'catalog':
        return await (await import('./commands/openapi.js')).catalogCommand(rest);
      case 'relay':
        return await (await import('./commands/relay.js')).relayCommand(rest);
      case undefined:
      case '-h':
      case '--help':
      case 'help':
        process.stdout.write(HELP + '\n');
        return command === undefined ? 2 : 0;
      case '--version':
        process.stdout.write(`${AIRLOCK_VERSION}\n`);
        return 0;
      default:
        throw new UsageError(`unknown command '${command}'; run 'airlock --help'`);
    }
  } catch (error) {
    if (error instanceof UsageError) {
      process.stderr.write(`airlock: ${error.message}\n`);
      return 2;
    }
    throw error;
  }
}
