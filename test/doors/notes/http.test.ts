import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { Client as V1Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as V1Transport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { createNotesDoor } from '../../../src/doors/notes/index.js';
import { createHttpApp, type HttpApp } from '../../../src/transport/http/http-app.js';
import { silentLogger } from '../../../src/kernel/logger.js';
import { testKernel, type TestKernel } from '../../helpers/kernel.js';
import { connectClient, MODERN_PROTOCOL } from '../../helpers/mcp-client.js';
import { samplePdf } from './fixtures.js';
import { provenance } from './harness.js';
import { agentHeaders, ownerHeaders } from '../../helpers/principals.js';

let tk: TestKernel;
let app: HttpApp;
let base: string;
/** The owner drives REST (notes content is the owner's); the agent speaks MCP. */
let owner: Record<string, string>;
let agentToken: string;

beforeAll(async () => {
  tk = await testKernel([createNotesDoor()]);
  app = createHttpApp({ kernel: tk.kernel, logger: silentLogger });
  const addr = await app.listen(0, '127.0.0.1');
  base = `http://127.0.0.1:${addr.port}`;
  owner = await ownerHeaders(tk.kernel);
  agentToken = (await agentHeaders(tk.kernel, 'e2e-agent')).authorization!.slice('Bearer '.length);
});
afterAll(async () => {
  await app.close();
  await tk.dispose();
});

async function api(method: string, path: string, body?: unknown, type = 'application/json') {
  const res = await fetch(`${base}/api/v1/${path}`, {
    method,
    headers: body === undefined ? owner : { ...owner, 'content-type': type },
    ...(body === undefined
      ? {}
      : {
          body: body instanceof Uint8Array ? new Blob([Buffer.from(body)]) : JSON.stringify(body),
        }),
  });
  const bytes = new Uint8Array(await res.arrayBuffer());
  const isJson = res.headers.get('content-type')?.includes('json');
  return {
    status: res.status,
    body: isJson ? JSON.parse(Buffer.from(bytes).toString('utf8')) : null,
    bytes,
  };
}

interface Result {
  content: { type: string; text: string }[];
  isError?: boolean;
}

describe('notes over the real MCP HTTP stack', () => {
  it('runs a full session: consent, approve via REST, read, write, retry, conflict, PDF, verify', async () => {
    const client = await connectClient(new URL('/mcp', base), {
      name: 'e2e-agent',
      token: agentToken,
    });
    const call = async (name: string, args: Record<string, unknown> = {}) => {
      const r = (await client.callTool({ name, arguments: args })) as Result;
      expect(r.content).toHaveLength(1);
      const env = JSON.parse(r.content[0]!.text) as {
        code: string;
        message?: string;
        resultJSON?: string;
      };
      expect(r.isError).toBe(env.code !== 'ready');
      return { env, result: env.resultJSON ? JSON.parse(env.resultJSON) : undefined };
    };
    const approve = async (capability: string, project: string) => {
      const pending = (await api('GET', 'approvals')).body.approvals as {
        id: string;
        capability: string;
      }[];
      const mine = pending.find((a) => a.capability === capability)!;
      const r = await api('POST', `approvals/${mine.id}/approve`, { resource: project });
      expect(r.status).toBe(200);
    };

    // owner data
    const thesis = (await api('POST', 'notes/projects', { name: 'Thesis' })).body.projectID;
    const other = (await api('POST', 'notes/projects', { name: 'Taxes' })).body.projectID;
    const chapter = (
      await api('POST', 'notes/documents', { projectID: thesis, title: 'Chapter 1' })
    ).body.documentID;
    await api('POST', 'notes/documents', { projectID: other, title: 'Receipts 2026' });
    await api('POST', `notes/documents/${chapter}/blocks`, { text: 'Owner wrote this.' });

    const { tools } = await client.listTools();
    expect(tools).toHaveLength(12);
    expect(tools.every((t) => t.inputSchema.additionalProperties === false)).toBe(true);

    expect((await call('rooqi_status')).result.grants).toEqual([]);
    expect((await call('rooqi_request_read_access')).env.code).toBe('approvalRequired');
    await approve('read', 'Thesis');
    expect((await call('rooqi_request_read_access')).result).toMatchObject({
      capability: 'read',
      projectName: 'Thesis',
    });
    expect((await call('rooqi_list_approved_documents')).result).toEqual({
      [chapter]: 'Chapter 1',
    });
    expect((await call('rooqi_read_note', { documentID: chapter })).result).toEqual({
      documentID: chapter,
      revision: 1,
      scope: 'savedTextBlocks',
      text: 'Owner wrote this.',
    });

    // malformed arguments are an envelope, not a protocol error
    const bad = await call('rooqi_read_note', { documentID: 'nope', extra: true });
    expect(bad.env.code).toBe('malformedRequest');

    expect((await call('rooqi_request_write_access')).env.code).toBe('approvalRequired');
    await approve('write', thesis);
    const documentID = randomUUID();
    const created = await call('rooqi_create_note', {
      operationID: randomUUID(),
      documentID,
      title: 'Agent notes',
      ...provenance,
    });
    expect(created.result.committedRevision).toBe(0);
    const append1 = {
      operationID: randomUUID(),
      documentID,
      text: 'First finding.',
      expectedVersion: 0,
      ...provenance,
    };
    const r1 = await call('rooqi_append_text', append1);
    const r2 = await call('rooqi_append_text', {
      ...append1,
      operationID: randomUUID(),
      text: 'Second finding.',
      expectedVersion: 1,
    });
    expect(r2.result.committedRevision).toBe(2);
    const retry = await call('rooqi_append_text', append1);
    expect(retry.env).toEqual(r1.env);
    const stale = await call('rooqi_append_text', {
      ...append1,
      operationID: randomUUID(),
      expectedVersion: 1,
    });
    expect(stale.env.code).toBe('versionConflict');
    const doc = (await api('GET', `notes/documents/${documentID}`)).body;
    expect(doc.blocks.map((b: { text: string }) => b.text)).toEqual([
      'First finding.',
      'Second finding.',
    ]);

    expect((await api('POST', 'notes/receipts/verify', r2.result)).body).toEqual({ valid: true });
    expect(
      (await api('POST', 'notes/receipts/verify', { ...r2.result, documentID: randomUUID() })).body,
    ).toEqual({ valid: false });

    // PDF
    const pdf = await samplePdf();
    const up = await api('POST', `notes/documents/${chapter}/pdfs`, pdf, 'application/pdf');
    expect(up.status).toBe(201);
    expect((await call('rooqi_list_pdf_targets', { documentID: chapter })).env.code).toBe(
      'notAuthorized',
    );
    expect((await call('rooqi_request_pdf_annotation_access')).env.code).toBe('approvalRequired');
    await approve('pdfAnnotate', 'Thesis');
    const targets = (await call('rooqi_list_pdf_targets', { documentID: chapter })).result;
    const target = targets.targets[0];
    const query = {
      documentID: chapter,
      surfaceID: target.surfaceID,
      pageIndex: 0,
      rect: { x: 0, y: 0, width: 1_000_000, height: 300_000 },
    };
    const read = (await call('rooqi_read_pdf_page', query)).result;
    expect(read.selectedText).toBe('Alpha Beta\nGamma delta');
    const annotated = await call('rooqi_annotate_pdf', {
      operationID: randomUUID(),
      query,
      expectedVersion: read.revision,
      sourceAssetID: read.sourceAssetID,
      sourceDigest: read.sourceDigest,
      geometryDigest: read.geometryDigest,
      selectionTextDigest: read.selectionTextDigest,
      kind: 'highlight',
      comment: 'important',
      ...provenance,
    });
    expect(annotated.env.code).toBe('ready');
    const download = await api('GET', `notes/documents/${chapter}/pdfs/${target.surfaceID}`);
    expect(download.status).toBe(200);
    expect(Buffer.from(download.bytes.subarray(0, pdf.length)).equals(Buffer.from(pdf))).toBe(true);
    expect(download.bytes.length).toBeGreaterThan(pdf.length);
    expect((await api('POST', 'notes/receipts/verify', annotated.result)).body).toEqual({
      valid: true,
    });

    const writes = (await api('GET', `notes/writes?documentID=${chapter}`)).body.writes;
    expect(writes).toEqual([
      expect.objectContaining({ tool: 'rooqi_annotate_pdf', provenance, committedRevision: 3 }),
    ]);
    const status = (await call('rooqi_status')).result;
    expect(status.grants.map((g: { capability: string }) => g.capability).sort()).toEqual([
      'pdfAnnotate',
      'read',
      'write',
    ]);
    await client.close();
  });

  it('answers SDK v1 and 2026-era clients with envelopes their output-schema checks accept', async () => {
    const v1 = new V1Client({ name: 'v1', version: '1' });
    await v1.connect(
      new V1Transport(new URL('/mcp', base), {
        requestInit: { headers: { authorization: `Bearer ${agentToken}` } },
      }),
    );
    const ok = (await v1.callTool({ name: 'rooqi_status', arguments: {} })) as unknown as Result;
    expect(JSON.parse(ok.content[0]!.text).code).toBe('ready');
    const err = (await v1.callTool({
      name: 'rooqi_read_note',
      arguments: { documentID: randomUUID() },
    })) as unknown as Result;
    expect(err.isError).toBe(true);
    expect(JSON.parse(err.content[0]!.text).code).toBe('notAuthorized');
    await v1.close();

    const modern = await connectClient(new URL('/mcp', base), {
      name: 'modern',
      version: '1',
      pin: MODERN_PROTOCOL,
      token: agentToken,
    });
    const r = (await modern.callTool({ name: 'rooqi_status', arguments: {} })) as Result;
    expect(JSON.parse(r.content[0]!.text).code).toBe('ready');
    await modern.close();
  });

  it('lists the notes routes in the OpenAPI document', async () => {
    const doc = (await api('GET', 'openapi.json')).body;
    expect(Object.keys(doc.paths)).toEqual(
      expect.arrayContaining([
        '/api/v1/notes/projects',
        '/api/v1/notes/documents',
        '/api/v1/notes/documents/{id}',
        '/api/v1/notes/documents/{id}/blocks',
        '/api/v1/notes/documents/{id}/pdfs',
        '/api/v1/notes/documents/{id}/pdfs/{surfaceID}',
        '/api/v1/notes/writes',
        '/api/v1/notes/receipts/verify',
      ]),
    );
  });
});
