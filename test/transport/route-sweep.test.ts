/**
 * One entrance (issue 24): every route in `/api/v1/openapi.json` whose method
 * is not GET, on a workspace with every door mounted, over real HTTP. For
 * each: an agent is refused — by the kernel's `readOnly` (rule `readOnly`)
 * under `readOnly` for the route's door where its `x-audience` lets agents
 * in, by the route's audience where it does not — and an allowed call leaves
 * an audit entry naming its tool and caller. A route added without a case
 * here fails the first test; one whose write skips the kernel fails its own.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { doorFactory } from '../../src/cli/workspace/doors.js';
import { silentLogger } from '../../src/kernel/logger.js';
import { fileFolderStorage } from '../../src/store/folder-file.js';
import { createHttpApp, type HttpApp } from '../../src/transport/http/http-app.js';
import { createPasskeys } from '../../src/transport/rest/passkeys.js';
import type { DoorContext } from '../../src/doors/context.js';
import type { ServedDoor } from '../../src/transport/surface.js';
import { testKernel, type TestKernel } from '../helpers/kernel.js';
import { agentHeaders, ownerHeaders } from '../helpers/principals.js';
import { waitFor } from '../helpers/wait.js';
import { connectClient } from '../helpers/mcp-client.js';
import { comicPage, tempDir } from '../doors/scene/helpers.js';
import { fakeLlm, type FakeLlm } from '../doors/scene/server.js';
import { serverBin } from '../doors/mcp/helpers.js';
import { browse, oauthUpstream, type OAuthUpstream } from '../doors/mcp/oauth-fixtures.js';
import { samplePdf } from '../doors/notes/fixtures.js';
import { createOAuthServer, type OAuthServer } from '../../src/transport/oauth/server.js';
import { Browser, cimdHost, type CimdHost } from '../helpers/oauth-client.js';

type Headers = Record<string, string>;
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = Record<string, any>;

let dir: string;
let llm: FakeLlm;
let tk: TestKernel;
let app: HttpApp;
let base: string;
let owner: Headers;
let alice: Headers;
let bob: Headers;
let audiences: Map<string, string>;
let oauth: OAuthUpstream;
let oauthServer: OAuthServer;
let cimd: CimdHost;

const PETSTORE = fileURLToPath(new URL('../fixtures/openapi/petstore.yaml', import.meta.url));

beforeAll(async () => {
  dir = tempDir();
  llm = await fakeLlm();
  // The llm step waits until its job is cancelled: pipelines stay running for the cancel routes.
  llm.delayMs = 60_000;
  oauth = await oauthUpstream();
  const ctx: DoorContext = {
    data: dir,
    storage: fileFolderStorage,
    logger: silentLogger,
    env: {},
    relayPort: 0,
    openapi: [{ spec: PETSTORE, baseUrl: 'http://127.0.0.1:9/', prefix: 'plane' }],
    upstreams: {
      mem: {
        command: process.execPath,
        args: [serverBin('memory')],
        env: { MEMORY_FILE_PATH: join(dir, 'memory.jsonl') },
      },
      // An HTTP upstream that requires OAuth (a real authorization server on loopback).
      gh: { url: oauth.url, oauth: {} },
    },
    config: { scene: { llm: { baseUrl: llm.url, model: 'fake' } } },
  };
  const doors: ServedDoor[] = [];
  for (const name of ['scene', 'notes', 'page', 'openapi', 'mcp'])
    doors.push(...(await doorFactory(name)!(ctx)));
  tk = await testKernel(doors, { dir });
  const passkeys = createPasskeys({ store: tk.kernel.store });
  passkeys.setRelyingParty({ id: 'localhost', origin: 'http://localhost' });
  oauthServer = createOAuthServer({ kernel: tk.kernel, logger: silentLogger });
  app = createHttpApp({
    kernel: tk.kernel,
    logger: silentLogger,
    maxBodyBytes: 16 * 1024 * 1024,
    passkeys,
    oauth: oauthServer,
    // The test send's own path is tested in test/notify/push.test.ts; here: who may call it.
    notify: {
      config: {},
      notifier: {
        destinations: async () => [
          { id: 'hook_sweep', label: 'https://hook.example', format: 'json' },
        ],
        test: async (id: string) => (id === 'hook_sweep' ? true : null),
        idle: async () => undefined,
        close: async () => undefined,
      },
    },
  });
  base = `http://127.0.0.1:${(await app.listen(0, '127.0.0.1')).port}`;
  await oauthServer.start(base, { proxy: false });
  cimd = await cimdHost();
  owner = await ownerHeaders(tk.kernel);
  alice = await agentHeaders(tk.kernel, 'alice');
  bob = await agentHeaders(tk.kernel, 'bob');
  const doc = (await (await fetch(`${base}/api/v1/openapi.json`, { headers: owner })).json()) as {
    paths: Record<string, Record<string, { 'x-audience': string }>>;
  };
  audiences = new Map(
    Object.entries(doc.paths).flatMap(([path, methods]) =>
      Object.entries(methods).map(([m, op]) => [`${m.toUpperCase()} ${path}`, op['x-audience']]),
    ),
  );
  // The upstream's tools are known once it is connected.
  await waitFor(
    async () =>
      ((await call(owner, 'GET', 'upstreams')).body.upstreams as Json[]).some(
        (u) => (u.tools as Json[] | undefined)?.length,
      ),
    { timeoutMs: 20_000, message: 'the memory upstream' },
  );
}, 60_000);

afterAll(async () => {
  await app?.close();
  await tk?.close();
  await llm?.close();
  await oauth?.close();
  await cimd?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A request body: JSON, raw bytes with their type, or a multipart form. */
type Body = { json: unknown } | { raw: Uint8Array; type: string } | { form: FormData };

async function call(who: Headers, method: string, path: string, body?: Body) {
  const headers: Headers = { ...who };
  let payload: BodyInit | undefined;
  if (body && 'json' in body) {
    headers['content-type'] = 'application/json';
    payload = JSON.stringify(body.json);
  } else if (body && 'raw' in body) {
    headers['content-type'] = body.type;
    payload = new Uint8Array(body.raw);
  } else if (body) payload = body.form;
  const res = await fetch(`${base}/api/v1/${path}`, { method, headers, body: payload });
  const text = await res.text();
  const type = res.headers.get('content-type') ?? '';
  return {
    status: res.status,
    body: (type.includes('json') && text ? JSON.parse(text) : {}) as Json,
    bytes: text.length,
  };
}

/** Succeeds or fails the test with what the server said. */
async function must(who: Headers, method: string, path: string, body?: Body) {
  const out = await call(who, method, path, body);
  if (out.status >= 300)
    throw new Error(`${method} ${path} answered ${out.status}: ${JSON.stringify(out.body)}`);
  return out.body;
}

const lastAuditId = async () =>
  ((await must(owner, 'GET', 'audit?order=desc&limit=1')).entries as Json[])[0]?.id ?? 0;
const auditAfter = async (id: number) =>
  (await must(owner, 'GET', `audit?afterId=${id}`)).entries as Json[];
const setReadOnly = (readOnly: boolean | string[]) =>
  must(owner, 'PUT', 'policy/read-only', { json: { readOnly } });

// --- the state a request needs, made by the owner --------------------------------------------

/** The open project, opened (created) when none is. */
async function openProject(): Promise<Json> {
  const current = await call(owner, 'GET', 'projects/current');
  if (current.status === 200) return current.body;
  return must(owner, 'POST', 'projects', { json: { name: `sweep ${randomUUID().slice(0, 8)}` } });
}

/** A page of the open project with one text node that has text (so `llm` may run), and its ids. */
async function pageWithText(): Promise<{ page: string; node: string }> {
  await openProject();
  const scene = (await must(owner, 'GET', 'scene.json')).scene as Json;
  for (const page of scene.pages as Json[])
    for (const node of page.nodes as Json[])
      if (node.kind.text?.text) return { page: page.id as string, node: node.id as string };
  const form = new FormData();
  form.append(
    'file',
    new Blob([new Uint8Array(await comicPage([], 120, 80))], { type: 'image/png' }),
    'p.png',
  );
  const page = ((await must(owner, 'POST', 'pages', { form })).pages as Json[])[0]!.id as string;
  const node = randomUUID();
  await must(owner, 'POST', 'history/apply', {
    json: {
      op: {
        addNode: {
          page,
          node: {
            id: node,
            transform: { x: 0, y: 0, width: 50, height: 20, rotationDeg: 0 },
            visible: true,
            kind: { text: { text: 'HELLO' } },
          },
        },
      },
    },
  });
  return { page, node };
}

const renameOp = () => ({
  updateProjectMeta: { patch: { name: `renamed ${randomUUID().slice(0, 6)}` } },
});

/** A pipeline `who` started that stays running (its llm step waits), by job id. */
async function runningJob(who: Headers): Promise<string> {
  const { page } = await pageWithText();
  const started = await must(who, 'POST', 'pipelines', { json: { steps: ['llm'], pages: [page] } });
  return started.jobId as string;
}

/** A project other than the open one's, made for deleting. */
async function spareProject(): Promise<string> {
  const made = await must(owner, 'POST', 'projects', {
    json: { name: `spare ${randomUUID().slice(0, 8)}` },
  });
  return made.id as string;
}

/** A pending policy ask of alice: deleting a project (destructive, so the default asks). */
async function pendingAsk(): Promise<string> {
  const id = await spareProject();
  const asked = await call(alice, 'DELETE', `projects/${id}`);
  expect(asked.body.code).toBe('approvalRequired');
  return asked.body.approvalID as string;
}

async function ownerRule(): Promise<string> {
  const rule = await must(owner, 'POST', 'policy/rules', {
    json: { door: 'sweep-no-such-door', decision: 'allow' },
  });
  return rule.id as string;
}

async function notesDocument(): Promise<string> {
  const project = await must(owner, 'POST', 'notes/projects', {
    json: { name: `n ${randomUUID()}` },
  });
  const doc = await must(owner, 'POST', 'notes/documents', {
    json: { projectID: project.projectID, title: 'sweep' },
  });
  return doc.documentID as string;
}

const pdfBody = async (): Promise<Body> => ({
  raw: await samplePdf({ marker: randomUUID() }),
  type: 'application/pdf',
});

/** What a refused scene write must leave as it was: the projects, the open one, its history, which jobs exist. */
async function workspaceState() {
  const meta = await must(owner, 'GET', 'meta');
  const jobs = (await must(owner, 'GET', 'operations')).operations as Json[];
  return {
    projects: (await must(owner, 'GET', 'projects')).projects as Json[],
    open: {
      project: meta.project,
      epoch: meta.epoch,
      canUndo: meta.canUndo,
      canRedo: meta.canRedo,
    },
    // Ids only: an earlier case's cancelled job may still be finishing.
    jobs: jobs.map((j) => j.id),
  };
}

// --- the cases: one per non-GET route ------------------------------------------------------------

interface Request {
  /** The path below /api/v1/, parameters filled. */
  path: string;
  body?: Body;
}

type RouteCase =
  | {
      kind: 'write';
      /** The door whose `readOnly` refuses an agent here (agent routes). */
      door?: string;
      /** What the audit entry of the allowed call names. */
      tool: string;
      /** Who makes the allowed call; default: an agent where the route lets one in, else the owner. */
      allowedAs?: 'owner';
      /** A request that would succeed now. */
      request(): Promise<Request>;
    }
  | {
      /** A POST that changes nothing (a what-if, a signature check): owner-only, so an agent is refused. */
      kind: 'read';
      request(): Promise<Request>;
    }
  | {
      /** The owner's browser session (sign-in, sign-out): who is signed in, not the workspace. */
      kind: 'session';
      request(): Promise<Request>;
    };

const at = (path: string, body?: Body): Request => (body ? { path, body } : { path });

const CASES: Record<string, RouteCase> = {
  // The scene door's Koharu API: agents and the owner alike.
  'POST /api/v1/history/apply': {
    kind: 'write',
    door: 'scene',
    tool: 'koharu.apply',
    request: async () => (await openProject(), at('history/apply', { json: { op: renameOp() } })),
  },
  'POST /api/v1/history/undo': {
    kind: 'write',
    door: 'scene',
    tool: 'koharu.undo',
    request: async () => {
      await openProject();
      await must(owner, 'POST', 'history/apply', { json: { op: renameOp() } });
      return at('history/undo', { json: {} });
    },
  },
  'POST /api/v1/history/redo': {
    kind: 'write',
    door: 'scene',
    tool: 'koharu.redo',
    request: async () => {
      await openProject();
      await must(owner, 'POST', 'history/apply', { json: { op: renameOp() } });
      await must(owner, 'POST', 'history/undo', { json: {} });
      return at('history/redo', { json: {} });
    },
  },
  'POST /api/v1/pages': {
    kind: 'write',
    door: 'scene',
    tool: 'koharu.upload_pages',
    request: async () => {
      await openProject();
      const form = new FormData();
      const png = await comicPage([], 100 + Math.floor(Math.random() * 50), 60);
      form.append('file', new Blob([new Uint8Array(png)], { type: 'image/png' }), 'up.png');
      return at('pages', { form });
    },
  },
  'POST /api/v1/pipelines': {
    kind: 'write',
    door: 'scene',
    tool: 'koharu.start_pipeline',
    request: async () => {
      const { page } = await pageWithText();
      return at('pipelines', { json: { steps: ['llm'], pages: [page] } });
    },
  },
  'DELETE /api/v1/operations/{id}': {
    kind: 'write',
    door: 'scene',
    tool: 'koharu.cancel_job',
    request: async () => at(`operations/${await runningJob(alice)}`),
  },
  'POST /api/v1/projects': {
    kind: 'write',
    door: 'scene',
    tool: 'koharu.create_project',
    request: async () => at('projects', { json: { name: `new ${randomUUID().slice(0, 8)}` } }),
  },
  'DELETE /api/v1/projects/{id}': {
    kind: 'write',
    door: 'scene',
    tool: 'koharu.delete_project',
    // Destructive: the default policy asks before an agent's (tested below); the owner's runs.
    allowedAs: 'owner',
    request: async () => at(`projects/${await spareProject()}`),
  },
  'PUT /api/v1/projects/current': {
    kind: 'write',
    door: 'scene',
    tool: 'koharu.open_project',
    request: async () => {
      const id = await spareProject();
      await must(owner, 'POST', 'projects', {
        json: { name: `other ${randomUUID().slice(0, 8)}` },
      });
      return at('projects/current', { json: { id } });
    },
  },
  'DELETE /api/v1/projects/current': {
    kind: 'write',
    door: 'scene',
    tool: 'koharu.close_project',
    request: async () => (await openProject(), at('projects/current')),
  },
  'POST /api/v1/projects/current/export': {
    kind: 'write',
    door: 'scene',
    tool: 'koharu.export',
    request: async () => (
      await openProject(),
      at('projects/current/export', { json: { format: 'khr' } })
    ),
  },
  'PUT /api/v1/projects/current/texts': {
    kind: 'write',
    door: 'scene',
    tool: 'koharu.apply',
    request: async () => {
      const { node } = await pageWithText();
      return at('projects/current/texts', {
        json: { texts: [{ nodeId: node, translation: `t ${randomUUID()}` }] },
      });
    },
  },
  'POST /api/v1/projects/import': {
    kind: 'write',
    door: 'scene',
    tool: 'koharu.import_project',
    request: async () => {
      await openProject();
      const res = await fetch(`${base}/api/v1/projects/current/export`, {
        method: 'POST',
        headers: { ...owner, 'content-type': 'application/json' },
        body: JSON.stringify({ format: 'khr' }),
      });
      return at('projects/import', {
        raw: new Uint8Array(await res.arrayBuffer()),
        type: 'application/zip',
      });
    },
  },

  // The kernel's own owner routes.
  'POST /api/v1/agents': {
    kind: 'write',
    tool: 'agents.add',
    request: async () => at('agents', { json: { name: `a${randomUUID().slice(0, 8)}` } }),
  },
  'DELETE /api/v1/agents/{name}': {
    kind: 'write',
    tool: 'agents.revoke',
    request: async () => {
      const name = `gone${randomUUID().slice(0, 8)}`;
      await must(owner, 'POST', 'agents', { json: { name } });
      return at(`agents/${name}`);
    },
  },
  'POST /api/v1/approvals/{id}/approve': {
    kind: 'write',
    tool: 'approvals.approve',
    request: async () => at(`approvals/${await pendingAsk()}/approve`, { json: { scope: 'once' } }),
  },
  'POST /api/v1/approvals/{id}/deny': {
    kind: 'write',
    tool: 'approvals.deny',
    request: async () => at(`approvals/${await pendingAsk()}/deny`, { json: { reason: 'no' } }),
  },
  'POST /api/v1/notify/push/subscriptions': {
    kind: 'write',
    tool: 'notify.push.subscribe',
    request: async () =>
      at('notify/push/subscriptions', {
        json: {
          endpoint: `https://push.example/send/${randomUUID()}`,
          keys: { p256dh: 'BPub', auth: 'c2VjcmV0' },
          device: 'sweep',
        },
      }),
  },
  'DELETE /api/v1/notify/push/subscriptions/{id}': {
    kind: 'write',
    tool: 'notify.push.unsubscribe',
    request: async () => {
      const made = await must(owner, 'POST', 'notify/push/subscriptions', {
        json: {
          endpoint: `https://push.example/send/${randomUUID()}`,
          keys: { p256dh: 'BPub', auth: 'c2VjcmV0' },
        },
      });
      return at(`notify/push/subscriptions/${made.subscription.id}`);
    },
  },
  'PUT /api/v1/notify/settings': {
    kind: 'write',
    tool: 'notify.settings',
    request: async () =>
      at('notify/settings', { json: { quietHours: { from: '22:00', to: '07:00' } } }),
  },
  'POST /api/v1/notify/test': {
    kind: 'write',
    tool: 'notify.test',
    request: async () => at('notify/test', { json: { destination: 'hook_sweep' } }),
  },
  'DELETE /api/v1/grants/{id}': {
    kind: 'write',
    tool: 'grants.revoke',
    request: async () => {
      const ask = await pendingAsk();
      await must(owner, 'POST', `approvals/${ask}/approve`, { json: { scope: '15m' } });
      const grants = (await must(owner, 'GET', 'grants')).grants as Json[];
      return at(`grants/${grants.at(-1)!.id}`);
    },
  },
  'DELETE /api/v1/jobs/{id}': {
    kind: 'write',
    tool: 'jobs.cancel',
    request: async () => at(`jobs/${await runningJob(owner)}`),
  },
  'PUT /api/v1/policy/read-only': {
    kind: 'write',
    tool: 'policy.readOnly',
    request: async () => at('policy/read-only', { json: { readOnly: false } }),
  },
  'POST /api/v1/policy/rules': {
    kind: 'write',
    tool: 'policy.add',
    request: async () =>
      at('policy/rules', { json: { door: 'sweep-no-such-door', decision: 'allow' } }),
  },
  'PUT /api/v1/policy/rules/{id}': {
    kind: 'write',
    tool: 'policy.update',
    request: async () =>
      at(`policy/rules/${await ownerRule()}`, {
        json: { door: 'sweep-no-such-door', decision: 'deny' },
      }),
  },
  'DELETE /api/v1/policy/rules/{id}': {
    kind: 'write',
    tool: 'policy.remove',
    request: async () => at(`policy/rules/${await ownerRule()}`),
  },
  'POST /api/v1/policy/rules/{id}/move': {
    kind: 'write',
    tool: 'policy.move',
    request: async () => at(`policy/rules/${await ownerRule()}/move`, { json: { position: 1 } }),
  },
  'POST /api/v1/policy/test': {
    kind: 'read',
    request: async () =>
      at('policy/test', { json: { door: 'scene', tool: 'koharu.list_engines' } }),
  },

  // The notes door's owner routes.
  'POST /api/v1/notes/projects': {
    kind: 'write',
    tool: 'notes.createProject',
    request: async () => at('notes/projects', { json: { name: `p ${randomUUID()}` } }),
  },
  'POST /api/v1/notes/documents': {
    kind: 'write',
    tool: 'notes.createDocument',
    request: async () => {
      const project = await must(owner, 'POST', 'notes/projects', {
        json: { name: `p ${randomUUID()}` },
      });
      return at('notes/documents', { json: { projectID: project.projectID, title: 'doc' } });
    },
  },
  'POST /api/v1/notes/documents/{id}/blocks': {
    kind: 'write',
    tool: 'notes.appendBlock',
    request: async () =>
      at(`notes/documents/${await notesDocument()}/blocks`, { json: { text: 'typed' } }),
  },
  'POST /api/v1/notes/documents/{id}/pdfs': {
    kind: 'write',
    tool: 'notes.uploadPdf',
    request: async () => at(`notes/documents/${await notesDocument()}/pdfs`, await pdfBody()),
  },
  'PUT /api/v1/notes/documents/{id}/pdfs/{surfaceID}': {
    kind: 'write',
    tool: 'notes.replacePdf',
    request: async () => {
      const doc = await notesDocument();
      const up = await must(owner, 'POST', `notes/documents/${doc}/pdfs`, await pdfBody());
      return at(`notes/documents/${doc}/pdfs/${up.surfaceID}`, await pdfBody());
    },
  },
  'POST /api/v1/notes/receipts/verify': {
    kind: 'read',
    request: async () => at('notes/receipts/verify', { json: { receipt: 'none' } }),
  },

  // The mcp door's owner route.
  'PUT /api/v1/upstreams/{name}/tools/{tool}/effect': {
    kind: 'write',
    tool: 'upstream.effect',
    request: async () => {
      const [mem] = (await must(owner, 'GET', 'upstreams')).upstreams as Json[];
      const tool = (mem!.tools as Json[])[0]!.name as string;
      return at(`upstreams/${mem!.name}/tools/${tool.replace(/^mem_/, '')}/effect`, {
        json: { effect: 'write' },
      });
    },
  },

  'POST /api/v1/upstreams/{name}/tools/{tool}/review': {
    kind: 'write',
    tool: 'upstream.review',
    request: async () => {
      const [mem] = (await must(owner, 'GET', 'upstreams')).upstreams as Json[];
      const tool = (mem!.tools as Json[])[0]!;
      return at(`upstreams/${mem!.name}/tools/${tool.upstreamTool as string}/review`, {
        json: { digest: tool.digest },
      });
    },
  },

  // Connecting an OAuth upstream (issue 29 item 4): the owner's alone.
  'POST /api/v1/upstreams/{name}/connect': {
    kind: 'write',
    tool: 'upstream.connect',
    request: async () => at('upstreams/gh/connect', { json: {} }),
  },
  'POST /api/v1/upstreams/oauth/callback': {
    kind: 'write',
    tool: 'upstream.connected',
    request: async () => {
      const started = await must(owner, 'POST', 'upstreams/gh/connect', { json: {} });
      const answer = await browse(
        started.authorizationUrl as string,
        `${base}/upstream-oauth/callback`,
      );
      return at('upstreams/oauth/callback', { json: answer });
    },
  },

  // Connecting a remote MCP client (issue 29): the owner's consent makes its agent.
  'POST /api/v1/oauth/requests/{id}': {
    kind: 'write',
    tool: 'oauth.consent',
    request: async () => {
      const url = new URL(`${base}/oauth/authorize`);
      for (const [k, v] of Object.entries({
        response_type: 'code',
        client_id: cimd.clientId,
        redirect_uri: cimd.redirectUri,
        scope: 'mcp',
        code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
        code_challenge_method: 'S256',
      }))
        url.searchParams.set(k, v);
      const consent = await new Browser().follow(url.href, (u) =>
        u.pathname.startsWith('/oauth/consent/'),
      );
      const id = consent.pathname.slice('/oauth/consent/'.length);
      return at(`oauth/requests/${id}`, { json: { decision: 'approve', agent: 'swept' } });
    },
  },

  // The transport's own: the owner's browser session.
  'POST /api/v1/session': {
    kind: 'session',
    request: async () => at('session', { json: { token: tokenOf(alice) } }),
  },
  'DELETE /api/v1/session': { kind: 'session', request: async () => at('session') },
  'POST /api/v1/session/stream-ticket': {
    kind: 'session',
    request: async () => at('session/stream-ticket'),
  },
  // The owner's passkeys (issue 25): nothing here lets an agent in, enrol or decide.
  'POST /api/v1/session/passkey-options': {
    kind: 'session',
    request: async () => at('session/passkey-options'),
  },
  'POST /api/v1/session/passkey': {
    kind: 'session',
    request: async () => at('session/passkey', { json: { response: { id: 'x' } } }),
  },
  'POST /api/v1/passkeys/options': {
    kind: 'session',
    request: async () => at('passkeys/options', { json: { name: 'laptop' } }),
  },
  'POST /api/v1/passkeys': {
    kind: 'session',
    request: async () => at('passkeys', { json: { name: 'laptop', response: {} } }),
  },
  'DELETE /api/v1/passkeys/{id}': { kind: 'session', request: async () => at('passkeys/x') },
  'POST /api/v1/presence/challenge': {
    kind: 'session',
    request: async () =>
      at('presence/challenge', { json: { method: 'POST', path: 'agents', body: { name: 'x' } } }),
  },
};

const tokenOf = (h: Headers) => h.authorization!.slice('Bearer '.length);
const methodOf = (key: string) => key.split(' ')[0]!;

describe('every non-GET route enters through the kernel', () => {
  it('has a case here for every non-GET route of /api/v1/openapi.json, and none for a route that is gone', () => {
    const routes = [...audiences.keys()].filter((k) => !k.startsWith('GET ')).sort();
    expect(routes).toEqual(Object.keys(CASES).sort());
  });

  for (const [key, c] of Object.entries(CASES)) {
    const method = methodOf(key);
    if (c.kind === 'write') {
      it(`${key}: an agent is refused (readOnly for its door, or the route's audience) and the allowed call is audited`, async () => {
        const audience = audiences.get(key)!;
        if (audience === 'agent') {
          expect(
            c.door,
            `${key} lets agents in: name the door whose readOnly covers it`,
          ).toBeDefined();
          // Made first: under readOnly the owner's own writes are refused too (authority.md §3).
          const req = await c.request();
          const before = await workspaceState();
          await setReadOnly([c.door!]);
          try {
            const refused = await call(alice, method, req.path, req.body);
            expect(refused.status, JSON.stringify(refused.body)).toBe(403);
            expect(refused.body).toMatchObject({ code: 'notAuthorized', rule: 'readOnly' });
            expect(await workspaceState()).toEqual(before);
          } finally {
            await setReadOnly(false);
          }
        } else {
          expect(audience).toBe('owner');
          const req = await c.request();
          const refused = await call(alice, method, req.path, req.body);
          expect(refused.status).toBe(403);
          expect(refused.body.code).toBe('notAuthorized');
        }
        const asAgent = audience === 'agent' && c.allowedAs !== 'owner';
        const req = await c.request();
        const since = await lastAuditId();
        const done = await call(asAgent ? alice : owner, method, req.path, req.body);
        expect(done.status, JSON.stringify(done.body)).toBeLessThan(300);
        const entries = await auditAfter(since);
        const mine = entries.filter(
          (e) =>
            e.tool === c.tool &&
            e.result === 'ok' &&
            (asAgent ? /^agent:alice\//.test(e.connection) : /^owner/.test(e.connection)),
        );
        expect(mine, `${key}: ${JSON.stringify(entries)}`).toHaveLength(1);
      });
    } else if (c.kind === 'read') {
      it(`${key} changes nothing and is the owner's: an agent is refused`, async () => {
        const req = await c.request();
        expect((await call(alice, method, req.path, req.body)).status).toBe(403);
        expect((await call(owner, method, req.path, req.body)).status).toBe(200);
      });
    } else {
      it(`${key} signs no agent in as the owner`, async () => {
        const req = await c.request();
        const out = await call(alice, method, req.path, req.body);
        expect(out.status).toBeGreaterThanOrEqual(400);
        expect(out.body.owner).toBeUndefined();
      });
    }
  }
});

describe('deleting a project is destructive', () => {
  it("an agent's DELETE /projects/{id} waits for the owner, leaves the folder, and runs once approved", async () => {
    const id = await spareProject();
    const listed = async () =>
      ((await must(owner, 'GET', 'projects')).projects as Json[]).some((p) => p.id === id);
    const asked = await call(alice, 'DELETE', `projects/${id}`);
    expect(asked.status).toBe(403);
    expect(asked.body.code).toBe('approvalRequired');
    expect(await listed()).toBe(true);
    const [approval] = ((await must(owner, 'GET', 'approvals')).approvals as Json[]).filter(
      (a) => a.id === asked.body.approvalID,
    );
    expect(approval).toMatchObject({
      kind: 'policy',
      tool: 'koharu.delete_project',
      agent: 'alice',
    });
    expect(String(approval!.preview.summary)).toContain('with no undo');
    await must(owner, 'POST', `approvals/${approval!.id}/approve`, { json: { scope: 'once' } });
    expect((await call(alice, 'DELETE', `projects/${id}`)).status).toBe(204);
    expect(await listed()).toBe(false);
  });

  it('the restOnly tools are neither listed nor callable over MCP; the kernel runs them for their routes', async () => {
    const id = await spareProject();
    const client = await connectClient(`${base}/mcp`, { token: tokenOf(alice) });
    try {
      const { tools } = await client.listTools();
      const names = tools.map((t) => t.name);
      expect(names).toContain('koharu.apply');
      for (const hidden of [
        'koharu.create_project',
        'koharu.delete_project',
        'koharu.upload_pages',
        'koharu.import_project',
      ]) {
        expect(names).not.toContain(hidden);
        expect(tk.kernel.tool('scene', hidden)).toBeDefined();
      }
      const called = await client
        .callTool({ name: 'koharu.delete_project', arguments: { id } })
        .then(
          (r) => JSON.stringify(r),
          (e: unknown) => String(e),
        );
      expect(called).toContain("Unknown tool 'koharu.delete_project'");
    } finally {
      await client.close();
    }
    const projects = (await must(owner, 'GET', 'projects')).projects as Json[];
    expect(projects.map((p) => p.id)).toContain(id);
  });
});

/**
 * What an agent may read over REST: the one shared scene (Koharu's model:
 * every client of the workspace edits the same project), or only its own
 * items. A new agent GET route must say which.
 */
const AGENT_READS: Record<string, 'workspace' | 'own'> = {
  'GET /api/v1/meta': 'workspace',
  'GET /api/v1/engines': 'workspace',
  'GET /api/v1/fonts': 'workspace',
  'GET /api/v1/scene.json': 'workspace',
  'GET /api/v1/blobs/{hash}': 'workspace',
  'GET /api/v1/pages/{id}/thumbnail': 'workspace',
  'GET /api/v1/projects': 'workspace',
  'GET /api/v1/projects/current': 'workspace',
  'GET /api/v1/projects/current/texts': 'workspace',
  'GET /api/v1/operations': 'own',
  'GET /api/v1/operations/{id}': 'own',
  // An agent's stream: its own calls and jobs, scene epochs without labels (finding 6).
  'GET /api/v1/events': 'own',
};

describe("an agent's reads", () => {
  it('every GET route agents may call says whether it shows the workspace or only their own items', () => {
    const reads = [...audiences]
      .filter(([k, audience]) => k.startsWith('GET ') && audience === 'agent')
      .map(([k]) => k)
      .sort();
    expect(reads).toEqual(Object.keys(AGENT_READS).sort());
  });

  // Jobs belong to the agent that started them (issue 24, finding 4).
  it("a second agent neither lists, reads nor cancels the first agent's pipeline", async () => {
    const job = await runningJob(alice);
    const listed = (await must(bob, 'GET', 'operations')).operations as Json[];
    expect(listed.map((j) => j.id)).not.toContain(job);
    expect((await call(bob, 'GET', `operations/${job}`)).status).toBe(404);
    expect((await call(bob, 'DELETE', `operations/${job}`)).status).toBe(404);
    expect(((await must(owner, 'GET', `operations/${job}`)) as Json).status).toBe('running');
    await must(alice, 'DELETE', `operations/${job}`);
  });
});
