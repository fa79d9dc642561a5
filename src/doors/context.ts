/**
 * What a door factory gets from the workspace: where data lives, the logger,
 * the environment, and the door-specific options given on the command line
 * or in the config file. Doors read only their own part.
 */
import type { FolderStorage, Logger } from '../kernel/index.js';
import type { ServedDoor } from '../transport/surface.js';

export interface OpenApiMount {
  /** Path or URL of an OpenAPI 3.0/3.1 or Swagger 2.0 document, or a compiled catalog. */
  spec: string;
  baseUrl?: string | undefined;
  /** Tool-name prefix and mount name (default `plane`). */
  prefix?: string | undefined;
  /** Extra request headers (`Name: value`). */
  headers?: Record<string, string> | undefined;
  /** Argument defaults (`slug=acme`). */
  defaults?: Record<string, string> | undefined;
}

export interface DoorContext {
  /** Absolute data folder. */
  data: string;
  /** Folder-kept storage (history logs, blobs) for doors that keep their own folders. */
  storage: FolderStorage;
  logger: Logger;
  env: NodeJS.ProcessEnv;
  /** The page door's relay port (0 picks a free one). */
  relayPort: number;
  /** One entry per `--openapi` mount. */
  openapi: OpenApiMount[];
  /** Upstream MCP servers from `--upstream` flags (the `upstreams` config shape; the mcp door merges both). */
  upstreams?: Record<string, unknown>;
  /** The config file's contents, for door-specific sections (e.g. `scene`, `notes`). */
  config: Record<string, unknown>;
}

export type DoorFactory = (ctx: DoorContext) => Promise<ServedDoor[]>;
