/** The process logger: pino JSON lines on stderr only (stdout stays for MCP stdio and human output). */
import { pino } from 'pino';
import type { Logger } from '../kernel/logger.js';

export function createProcessLogger(
  level = process.env.AIRLOCK_LOG_LEVEL ?? 'info',
): Logger & { flush?: () => void } {
  return pino(
    { name: 'airlock', level },
    pino.destination({ fd: 2, sync: true }),
  ) as unknown as Logger;
}
