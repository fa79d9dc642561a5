/**
 * `airlock/page`: the relay module, with the reference's export names.
 * Every export here is a promise: it keeps its name and meaning across
 * releases. Importing starts nothing.
 */
export { loadConfig, ConfigError, type RelayConfig } from '../doors/page/config.js';
export {
  Puente,
  type PuenteOptions,
  type PuenteLogger,
  type SendOptions,
} from '../doors/page/puente.js';
export { RelayError, type RelayErrorCode } from '../doors/page/relay-error.js';
export {
  main,
  createMcpServer,
  createCommandRunner,
  startRelay,
  type WuMcpServer,
  type WuMcpToolResult,
  type RelayHandle,
} from './relay.js';
export { isOriginAllowed, tokenMatches, isReservedEvent } from '../doors/page/auth.js';
export { createPageDoor, type PageDoorOptions } from '../doors/page/door.js';
