/**
 * Door `page` (spec/page.md): a live web page, through the browser bridge
 * (`src/web/bridge`, served at `/bridge.js`) and the relay (`Puente`).
 * In `airlock serve` the relay listens on `--relay-port` (0 = free port) with
 * the token from WU_MCP_TOKEN, or a fresh random one the workspace's own page
 * fetches from `GET /api/v1/page/bridge-token`.
 */
import { randomBytes } from 'node:crypto';
import type { DoorContext } from '../context.js';
import type { ServedDoor } from '../../transport/surface.js';
import { loadConfig } from './config.js';
import { createPageDoor } from './door.js';

export async function createPageDoors(ctx: DoorContext): Promise<ServedDoor[]> {
  const env = ctx.env;
  const base = loadConfig({
    WU_MCP_TOKEN: env.WU_MCP_TOKEN ?? randomBytes(32).toString('base64url'),
    WU_MCP_HOST: env.WU_MCP_HOST,
    WU_MCP_TIMEOUT: env.WU_MCP_TIMEOUT,
    WU_MCP_AUTH_TIMEOUT: env.WU_MCP_AUTH_TIMEOUT,
    WU_MCP_MAX_PAYLOAD: env.WU_MCP_MAX_PAYLOAD,
    WU_MCP_ORIGINS: env.WU_MCP_ORIGINS,
  });
  // --relay-port wins over WU_MCP_PORT here, and 0 picks a free port.
  const config = Object.freeze({ ...base, port: ctx.relayPort });
  const log = ctx.logger.child({ door: 'page' });
  return [
    createPageDoor({
      config,
      logger: {
        error: (...args: unknown[]) => log.error(args.map(String).join(' ')),
        info: (...args: unknown[]) =>
          typeof args[0] === 'object' && args[0] !== null
            ? log.info(args[0] as Record<string, unknown>, String(args[1] ?? ''))
            : log.info(args.map(String).join(' ')),
      },
    }),
  ];
}
