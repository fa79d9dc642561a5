/**
 * `airlock relay`: the page door alone, WU-style (spec/page.md "Relay"):
 * MCP over stdio plus the bridge WebSocket listener, configured by the
 * WU_MCP_* variables. Logs go to stderr only; stdout carries MCP.
 */
import { ConfigError } from '../../doors/page/config.js';
import { startRelay, type RelayHandle } from '../../relay/relay.js';
import { mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { parse, UsageError } from '../args.js';
import { ensureOwner } from '../workspace/credentials.js';
import { createProcessLogger } from '../logger.js';
import { configPolicy, readConfig } from '../config/config-file.js';

export const RELAY_HELP = `Usage: airlock relay

The page door alone: MCP over stdio plus the bridge WebSocket listener.
Configured by environment variables:
  WU_MCP_TOKEN         required secret, 16-4096 UTF-8 bytes
  WU_MCP_HOST          listener host (default 127.0.0.1)
  WU_MCP_PORT          listener port (default 19100)
  WU_MCP_TIMEOUT       per-command timeout, 50-300000 ms (default 30000)
  WU_MCP_AUTH_TIMEOUT  time to authenticate, 50-60000 ms (default 5000)
  WU_MCP_MAX_PAYLOAD   WebSocket message limit, 1024-16777216 bytes (default 1048576)
  WU_MCP_ORIGINS       comma-separated exact origins (default: loopback http(s))
  WU_MCP_INSECURE      1 allows running without a token (loopback tests only)

Options:
  --data DIR     keeps the audit trail, journal, policy and approvals (default ./.airlock);
                 'airlock approvals --data DIR' answers this relay's policy asks there
  --config FILE  JSON with a "policy" section (the owner's rules; see 'airlock serve --help')

Exit codes: 0 clean shutdown, 2 bad configuration, 1 other errors.`;

export async function relayCommand(argv: string[]): Promise<number> {
  if (argv.includes('-h') || argv.includes('--help')) {
    process.stdout.write(RELAY_HELP + '\n');
    return 0;
  }
  const { values, positionals } = parse({
    args: argv,
    allowPositionals: true,
    options: { data: { type: 'string' }, config: { type: 'string' } },
  });
  if (positionals.length > 0)
    throw new UsageError(
      `relay takes no arguments (got '${positionals[0]}'); configure it with WU_MCP_* variables, --data and --config`,
    );
  const data = resolve(values.data ?? './.airlock');
  const policy = configPolicy(readConfig(values.config));
  mkdirSync(data, { recursive: true });
  // Signals are handled from the start, so one that arrives during start-up still closes cleanly.
  let relay: RelayHandle | undefined;
  let stopping = false;
  const stop = () => {
    stopping = true;
    void relay?.close();
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  try {
    try {
      relay = await startRelay(process.env, undefined, {
        data,
        policy,
        // The owner answers this relay's policy asks with `airlock approvals --data`.
        ready: (kernel) =>
          ensureOwner(kernel.principals, data, createProcessLogger()).then(() => undefined),
      });
    } catch (error) {
      if (error instanceof ConfigError) throw new UsageError(error.message);
      throw error;
    }
    if (stopping) void relay.close();
    process.stdin.once('end', stop).once('close', stop);
    await relay.closed;
  } finally {
    process.off('SIGINT', stop);
    process.off('SIGTERM', stop);
  }
  return 0;
}
