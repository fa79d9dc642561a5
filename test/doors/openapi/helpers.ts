/** Shared pieces of the openapi door tests: prism on loopback, a door on a real kernel, counting servers. */
import type { ChildProcess } from 'node:child_process';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { fileURLToPath } from 'node:url';
import { callPresented, testKernel, conn, type TestKernel } from '../../helpers/kernel.js';
import { freePort, listenLoopback, startProcess } from '../../helpers/servers.js';
import { createOpenapiDoor, type OpenapiDoorOptions } from '../../../src/doors/openapi/door.js';
import { compileSpec } from '../../../src/doors/openapi/compile/compile.js';
import { silentLogger, type Logger } from '../../../src/kernel/logger.js';
import type { Catalog } from '../../../src/doors/openapi/catalog.js';

/** The OpenAPI documents the tests use, kept in the repository (see its SOURCES.md). */
const FIXTURES_URL = new URL('../../fixtures/openapi/', import.meta.url);
export const FIXTURES = fileURLToPath(FIXTURES_URL);
export const fixture = (name: string) => fileURLToPath(new URL(name, FIXTURES_URL));
const PRISM = fileURLToPath(
  new URL('../../../node_modules/@stoplight/prism-cli/dist/index.js', import.meta.url),
);

export interface Prism {
  url: string;
  child: ChildProcess;
  close(): Promise<void>;
}

/** `prism mock` on loopback; resolves once it listens. */
export async function startPrism(spec: string, timeoutMs = 60_000): Promise<Prism> {
  const port = await freePort();
  const { child } = await startProcess(
    process.execPath,
    [PRISM, 'mock', '-h', '127.0.0.1', '-p', String(port), spec],
    { ready: /listening on/i, stream: 'either', timeoutMs, name: 'prism' },
  );
  return {
    url: `http://127.0.0.1:${port}`,
    child,
    close: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

export interface MountedDoor {
  tk: TestKernel;
  prefix: string;
  /** The raw MCP tool result. */
  call(tool: 'resources' | 'describe' | 'call', args: unknown): Promise<ToolOutcome>;
  close(): Promise<void>;
}

export interface ToolOutcome {
  isError: boolean;
  text: string;
  structured?: Record<string, unknown>;
}

export async function mountDoor(
  catalog: Catalog,
  options: Partial<Omit<OpenapiDoorOptions, 'catalog'>> = {},
): Promise<MountedDoor> {
  const prefix = options.prefix ?? 'plane';
  const door = createOpenapiDoor({ catalog, env: {}, logger: silentLogger, ...options, prefix });
  const tk = await testKernel([door]);
  return {
    tk,
    prefix,
    async call(tool, args) {
      const result = (await callPresented(tk.kernel, prefix, `${prefix}_${tool}`, args, {
        connection: conn(),
      })) as unknown as {
        content: { text: string }[];
        isError?: boolean;
        structuredContent?: Record<string, unknown>;
      };
      return {
        isError: result.isError === true,
        text: result.content[0]?.text ?? '',
        ...(result.structuredContent ? { structured: result.structuredContent } : {}),
      };
    },
    close: () => tk.dispose(),
  };
}

const compiled = new Map<string, Promise<Catalog>>();
/** Each fixture compiled once per test file. */
export const catalogOf = (name: string) => {
  if (!compiled.has(name)) compiled.set(name, compileSpec(fixture(name)));
  return compiled.get(name)!;
};

export interface CountingServer {
  url: string;
  requests: { method: string; url: string; headers: IncomingMessage['headers']; body: string }[];
  close(): Promise<void>;
}

/** A loopback HTTP server that records every request and answers with `handler`. */
export async function countingServer(
  handler: (req: IncomingMessage, res: ServerResponse, body: string) => void,
): Promise<CountingServer> {
  const requests: CountingServer['requests'] = [];
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d.toString()));
    req.on('end', () => {
      requests.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
      handler(req, res, body);
    });
  });
  const port = await listenLoopback(server);
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

export const json = (
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
) => {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
};

/** A logger that keeps every line, to check no secret is ever logged. */
export function recordingLogger(lines: string[]): Logger {
  const log = (level: string) => (a: unknown, b?: unknown) =>
    void lines.push(JSON.stringify({ level, a, b }));
  const logger: Logger = {
    debug: log('debug'),
    info: log('info'),
    warn: log('warn'),
    error: log('error'),
    child: () => logger,
  };
  return logger;
}
