/**
 * `airlock` — the toolkit's public API. Every export here is a promise: it
 * keeps its name and meaning across minor versions. Anything not exported
 * here is internal and may change.
 *
 * @example
 * import { createKernel, createEventBus, openStore, createHttpApp, defineTool, silentLogger } from 'airlock';
 */

// The kernel: tools, the pipeline's outcomes, errors, services, principals (its own curated surface)
export * from './kernel/index.js';

// How doors show themselves on the wires
export type {
  Audience,
  ServedDoor,
  ServingKernel,
  McpSurface,
  HttpSurface,
  Presenter,
  Presented,
  ToolResult,
  RestRoute,
  RestRequest,
  RestResponse,
} from './transport/surface.js';
export { defaultPresenter, presentOutcome } from './transport/mcp/present.js';

// Storage and transport
export { openStore } from './store/open.js';
export { createFileHistoryLog } from './store/history-file.js';
export { fileFolderStorage } from './store/folder-file.js';
export { createRedisBusTransport } from './store/redis-bus.js';
export { createHttpApp } from './transport/http/http-app.js';
export type { HttpApp, HttpAppOptions } from './transport/http/http-app.js';
export { createMcpServer } from './transport/mcp/mcp-server.js';
