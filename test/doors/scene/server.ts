/**
 * A real workspace for scene tests: kernel on temp SQLite, the scene door,
 * the HTTP app on loopback, an MCP client, an SSE reader, and a fake
 * OpenAI-compatible endpoint on loopback.
 */
import { createServer, type Server } from 'node:http';
import { rmSync } from 'node:fs';
import type { Client } from '@modelcontextprotocol/client';
import { createHttpApp, type HttpApp } from '../../../src/transport/http/http-app.js';
import { silentLogger } from '../../../src/kernel/logger.js';
import { testKernel, type TestKernel } from '../../helpers/kernel.js';
import { listenLoopback, startServe } from '../../helpers/servers.js';
import { testEnv } from '../../helpers/cli.js';
import { connectClient } from '../../helpers/mcp-client.js';
import { waitFor } from '../../helpers/wait.js';
import { agentHeaders, ownerHeaders } from '../../helpers/principals.js';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { sceneDoor, tempDir } from './helpers.js';

export interface FakeLlm {
  url: string;
  /** Each request's prompt, and the `traceparent` header it carried (issue 33). */
  requests: { system: string; user: string; traceparent?: string | undefined }[];
  /** Delay per request (ms), to give cancellation time. */
  delayMs: number;
  /** A segment number the reply leaves out (0: none). */
  omit: number;
  close(): Promise<void>;
}

/** Answers `n: <text> [pt]` for each numbered segment, numbers in reverse order. */
export async function fakeLlm(): Promise<FakeLlm> {
  const state: FakeLlm = {
    url: '',
    requests: [],
    delayMs: 0,
    omit: 0,
    close: async () => undefined,
  };
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      const parsed = JSON.parse(body) as { messages: { role: string; content: string }[] };
      const system = parsed.messages.find((m) => m.role === 'system')?.content ?? '';
      const user = parsed.messages.find((m) => m.role === 'user')?.content ?? '';
      const traceparent = req.headers.traceparent as string | undefined;
      state.requests.push({ system, user, ...(traceparent ? { traceparent } : {}) });
      const lines = user
        .split('\n')
        .map((l) => /^(\d+): (.*)$/.exec(l))
        .filter((m): m is RegExpExecArray => m !== null && Number(m[1]) !== state.omit)
        .map((m) => `${m[1]}: ${m[2]!.toLowerCase()} [pt]`)
        .reverse();
      setTimeout(() => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            choices: [{ message: { role: 'assistant', content: lines.join('\n') } }],
          }),
        );
      }, state.delayMs);
    });
  });
  state.url = `http://127.0.0.1:${await listenLoopback(server)}/v1`;
  state.close = () =>
    new Promise((r) => {
      server.closeAllConnections();
      server.close(() => r());
    });
  return state;
}

/**
 * Where a scene test reaches the HTTP API and as whom: Koharu's REST API and
 * the event stream take the agent's token (authority.md §1), the audit the owner's.
 */
export interface Endpoint {
  base: string;
  /** `authorization: Bearer <agent token>`. */
  headers: Record<string, string>;
  /** `authorization: Bearer <owner token>`. */
  owner: Record<string, string>;
  /** fetch with the agent's token added to the request's headers. */
  fetch(url: string, init?: RequestInit): Promise<Response>;
}

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const tokenOf = (headers: Record<string, string>) => headers.authorization!.slice('Bearer '.length);

function endpoint(base: string, headers: Record<string, string>, owner: Record<string, string>) {
  return {
    base,
    headers,
    owner,
    fetch: (url: string, init: RequestInit = {}) =>
      fetch(url, {
        ...init,
        headers: { ...headers, ...((init.headers as Record<string, string> | undefined) ?? {}) },
      }),
  } satisfies Endpoint;
}

export interface SceneServer extends Endpoint {
  tk: TestKernel;
  app: HttpApp;
  llm: FakeLlm;
  data: string;
  mcp(): Promise<Client>;
  close(): Promise<void>;
}

export async function sceneServer(): Promise<SceneServer> {
  const llm = await fakeLlm();
  const data = tempDir();
  const door = await sceneDoor(data, { llm: { baseUrl: llm.url, model: 'fake' } });
  const tk = await testKernel([door], { dir: data });
  const app = createHttpApp({
    kernel: tk.kernel,
    logger: silentLogger,
    maxBodyBytes: 16 * 1024 * 1024,
  });
  const addr = await app.listen(0, '127.0.0.1');
  const base = `http://127.0.0.1:${addr.port}`;
  const agent = await agentHeaders(tk.kernel, 'scene-test');
  const clients: Client[] = [];
  return {
    ...endpoint(base, agent, await ownerHeaders(tk.kernel)),
    tk,
    app,
    llm,
    data,
    async mcp() {
      const client = await connectClient(new URL('/mcp', base), {
        name: 'scene-test',
        token: tokenOf(agent),
      });
      clients.push(client);
      return client;
    },
    async close() {
      for (const c of clients) await c.close().catch(() => undefined);
      await app.close();
      await tk.close();
      await llm.close();
      rmSync(data, { recursive: true, force: true });
    },
  };
}

/** The scene door in a real `airlock serve` child process (dist/), llm pointed at a loopback fake. */
/** `airlock serve --doors scene` with the fake LLM; `env` adds to the test environment (OTEL_*). */
export async function servedScene(env: Record<string, string> = {}) {
  const llm = await fakeLlm();
  const data = tempDir();
  const config = join(data, 'config.json');
  writeFileSync(config, JSON.stringify({ scene: { llm: { baseUrl: llm.url, model: 'fake' } } }));
  const served = await startServe(
    ['--doors', 'scene', '--data', join(data, 'data'), '--config', config],
    testEnv(env),
  );
  const clients: Client[] = [];
  return {
    ...endpoint(served.url, bearer(served.agentToken!), bearer(served.ownerToken!)),
    llm,
    async mcp() {
      const client = await connectClient(new URL('/mcp', served.url), {
        name: 'scene-test',
        token: served.agentToken!,
      });
      clients.push(client);
      return client;
    },
    async close() {
      for (const c of clients) await c.close().catch(() => undefined);
      served.child.kill('SIGTERM');
      await served.exited;
      await llm.close();
      rmSync(data, { recursive: true, force: true });
    },
  };
}

export type SseEvent = Record<string, unknown> & { event: string };

/** Reads /api/v1/events into an array until stopped. */
export function sse(at: Endpoint) {
  const abort = new AbortController();
  const events: SseEvent[] = [];
  const decoder = new TextDecoder();
  const connected = at.fetch(`${at.base}/api/v1/events`, { signal: abort.signal }).then((res) => {
    const reader = res.body!.getReader();
    let buf = '';
    void (async () => {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buf += decoder.decode(value, { stream: true });
        let i;
        while ((i = buf.indexOf('\n\n')) >= 0) {
          const frame = buf.slice(0, i);
          buf = buf.slice(i + 2);
          const data = frame
            .split('\n')
            .filter((l) => l.startsWith('data:'))
            .map((l) => l.slice(5).trim())
            .join('\n');
          if (data) events.push(JSON.parse(data) as SseEvent);
        }
      }
    })().catch(() => undefined);
  });
  return {
    events,
    /** Resolves once the snapshot frame arrived. */
    ready: async () => {
      await connected;
      await until(() => events.some((e) => e.event === 'snapshot'), 60_000, 'the snapshot frame');
    },
    stop: () => abort.abort(),
  };
}

/** Waits (up to 60 s, the scene pipelines' scale) until `check` holds. */
export const until = (check: () => boolean, timeoutMs = 60_000, message?: string) =>
  waitFor(check, { timeoutMs, ...(message ? { message } : {}) });

/** Uploads PNG pages through POST /api/v1/pages (multipart). */
export async function uploadPages(at: Endpoint, files: { name: string; bytes: Uint8Array }[]) {
  const form = new FormData();
  for (const f of files)
    form.append('file', new Blob([new Uint8Array(f.bytes)], { type: 'image/png' }), f.name);
  const res = await at.fetch(`${at.base}/api/v1/pages`, { method: 'POST', body: form });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

/**
 * The owner lets the test agent undo and redo unasked: suites about what
 * undo and redo do (not about the policy) walk the history as the agent, and
 * undoing an added page is otherwise a removal the owner is asked about.
 */
export async function trustHistoryMoves(s: SceneServer): Promise<void> {
  for (const tool of ['koharu.undo', 'koharu.redo'])
    await s.tk.kernel.policy.add({ door: 'scene', tool, decision: 'allow' });
}

export const json = async (res: Response) => (await res.json()) as Record<string, unknown>;

export const post = (at: Endpoint, path: string, body?: unknown, method = 'POST') =>
  at.fetch(`${at.base}/api/v1/${path}`, {
    method,
    headers: { 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
