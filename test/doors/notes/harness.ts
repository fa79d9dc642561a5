/**
 * A real kernel (temp SQLite) with the notes door mounted, plus helpers to
 * call tools, read envelopes, drive the owner's REST routes in-process and
 * approve grants the way the owner does.
 */
import { randomUUID } from 'node:crypto';
import { createNotesDoor, type NotesDoorOptions } from '../../../src/doors/notes/index.js';
import { createRouter } from '../../../src/transport/http/router.js';
import type { RestResponse, ServedDoor, ToolResult } from '../../../src/transport/surface.js';
import { failureResponse } from '../../../src/transport/http/http-errors.js';
import { isFailure } from '../../../src/kernel/errors.js';
import { connection as agentConnection } from '../../../src/kernel/connection.js';
import type { Limits } from '../../../src/kernel/tool.js';
import { callPresented, conn, testKernel, type TestKernel } from '../../helpers/kernel.js';

export interface Envelope {
  code: string;
  message?: string;
  resultJSON?: string;
}

export interface RestAnswer {
  status: number;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  body: any;
  raw?: Uint8Array;
}

export interface Harness {
  tk: TestKernel;
  door: ServedDoor;
  call(tool: string, args: unknown, connection?: string): Promise<ToolResult>;
  /** Calls and returns the parsed envelope. */
  env(tool: string, args: unknown, connection?: string): Promise<Envelope>;
  /** Calls, expects `ready`, returns the parsed resultJSON. */
  ok<T = Record<string, unknown>>(tool: string, args: unknown, connection?: string): Promise<T>;
  /** REST bodies are read loosely in tests. */
  rest(method: string, path: string, body?: unknown): Promise<RestAnswer>;
  /** Creates a project and returns its id. */
  project(name: string): Promise<string>;
  /** Creates a document in a project and returns its id. */
  document(projectID: string, title?: string): Promise<string>;
  /** Requests the capability on the connection and approves it for the project. */
  grant(
    capability: 'read' | 'write' | 'pdfAnnotate',
    projectID: string,
    connection?: string,
  ): Promise<void>;
  dispose(): Promise<void>;
}

const REQUEST_TOOL = {
  read: 'rooqi_request_read_access',
  write: 'rooqi_request_write_access',
  pdfAnnotate: 'rooqi_request_pdf_annotation_access',
} as const;

/** The text of a result's one content item. */
export const textOf = (r: ToolResult): string => String(r.content[0]?.text);

export const envelopeOf = (r: ToolResult): Envelope => JSON.parse(textOf(r)) as Envelope;

export async function notesHarness(
  options: NotesDoorOptions & { limits?: Partial<Limits>; dir?: string; now?: () => number } = {},
): Promise<Harness> {
  const door = createNotesDoor(options);
  const tk = await testKernel([door], {
    ...(options.limits ? { limits: { notes: options.limits } } : {}),
    ...(options.dir ? { dir: options.dir } : {}),
    ...(options.now ? { now: options.now } : {}),
  });
  const router = createRouter();
  for (const route of door.http?.routes ?? []) router.add(route);

  const call = async (tool: string, args: unknown, connection = 'test:1') =>
    (await callPresented(tk.kernel, 'notes', tool, args, {
      // `agent:<name>` calls act as that agent, so the owner's policy asks them.
      connection: connection.startsWith('agent:')
        ? agentConnection(
            connection,
            'http-principal',
            undefined,
            connection.slice('agent:'.length),
          )
        : conn(connection),
    })) as ToolResult;
  const env = async (tool: string, args: unknown, connection?: string) =>
    envelopeOf(await call(tool, args, connection));

  const h: Harness = {
    tk,
    door,
    call,
    env,
    async ok(tool, args, connection) {
      const e = await env(tool, args, connection);
      if (e.code !== 'ready') throw new Error(`${tool} answered ${e.code}: ${e.message}`);
      return JSON.parse(e.resultJSON!);
    },
    async rest(method, path, body) {
      const url = new URL(path, 'http://x/');
      const m = router.match(method, url.pathname.slice(1));
      if (!m.route) return { status: 404, body: null };
      const answer = await m.route.handler({
        params: m.params,
        query: url.searchParams,
        body,
        headers: {},
      });
      const out: RestResponse = isFailure(answer) ? failureResponse(answer) : answer;
      return { status: out.status, body: out.body, ...(out.raw ? { raw: out.raw.bytes } : {}) };
    },
    async project(name) {
      const r = await h.rest('POST', 'notes/projects', { name });
      return r.body.projectID as string;
    },
    async document(projectID, title = 'A note') {
      const r = await h.rest('POST', 'notes/documents', { projectID, title });
      return r.body.documentID as string;
    },
    async grant(capability, projectID, connection = 'test:1') {
      const first = await env(REQUEST_TOOL[capability], {}, connection);
      if (first.code === 'ready') return;
      const pending = (await tk.kernel.consent.pending()).find(
        (a) => a.connection === connection && a.capability === capability,
      );
      if (!pending) throw new Error(`no pending ${capability} approval (${first.code})`);
      const projects = await door.resources!(capability);
      const project = projects.find((p) => p.id === projectID)!;
      await tk.kernel.consent.approve(pending.id, project);
    },
    dispose: () => tk.dispose(),
  };
  return h;
}

export const uuid = () => randomUUID();

export const provenance = { provider: 'acme', model: 'model-1', promptVersion: 'v1' };
