/**
 * The notes door through the real `airlock` command (dist/): a session over
 * HTTP approved from `airlock approvals`, receipts checked with
 * `airlock approvals verify-receipt`, a session over stdio, and SIGKILL in the
 * middle of a stream of appends and annotations.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { BIN, run, testEnv } from '../../helpers/cli.js';
import { startServe, type Served } from '../../helpers/servers.js';
import { connectClient } from '../../helpers/mcp-client.js';
import { toolJson } from '../../helpers/results.js';
import { annotationNames } from '../../../src/doors/notes/pdf-incremental.js';
import { samplePdf } from './fixtures.js';
import { provenance } from './harness.js';
import { waitFor } from '../../helpers/wait.js';

const dirs: string[] = [];
const tempDir = () => {
  const d = mkdtempSync(join(tmpdir(), 'airlock-notes-cli-'));
  dirs.push(d);
  return d;
};
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

interface Env {
  code: string;
  message?: string;
  resultJSON?: string;
}
type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

async function agent(client: Client) {
  const call = async (name: string, args: Record<string, unknown> = {}) => {
    const r = await client.callTool({ name, arguments: args });
    const env = toolJson(r) as unknown as Env;
    expect(r.isError).toBe(env.code !== 'ready');
    return { env, result: (env.resultJSON ? JSON.parse(env.resultJSON) : undefined) as Json };
  };
  return call;
}

/** An agent over HTTP with the token `airlock serve` printed. */
const httpClient = (served: Served) =>
  connectClient(new URL('/mcp', served.url), {
    name: 'notes-cli-agent',
    version: '1',
    token: served.agentToken!,
  });

/** The owner's REST API of `served` (the owner token it keeps in its data folder). */
async function api(served: Served, method: string, path: string, body?: unknown) {
  const pdf = body instanceof Uint8Array;
  const owner = { authorization: `Bearer ${served.ownerToken!}` };
  const res = await fetch(`${served.url}/api/v1/${path}`, {
    method,
    headers:
      body === undefined
        ? owner
        : { ...owner, 'content-type': pdf ? 'application/pdf' : 'application/json' },
    ...(body === undefined
      ? {}
      : { body: pdf ? new Blob([Buffer.from(body)]) : JSON.stringify(body) }),
  });
  const type = res.headers.get('content-type') ?? '';
  if (type.includes('json')) return { status: res.status, body: (await res.json()) as Json };
  return { status: res.status, body: {} as Json, bytes: new Uint8Array(await res.arrayBuffer()) };
}

/**
 * Approves the newest pending request for `capability` from the CLI as the
 * owner (the owner token in the server's data folder `dir`), naming the project.
 */
async function approveFromCli(url: string, dir: string, capability: string, project: string) {
  const list = await run(['approvals', 'list', '--json', '--url', url, '--data', dir]);
  expect(list.code).toBe(0);
  const pending = (JSON.parse(list.stdout) as { id: string; capability: string }[]).filter(
    (a) => a.capability === capability,
  );
  const id = pending[pending.length - 1]!.id;
  const ok = await run([
    'approvals',
    'approve',
    id,
    '--project',
    project,
    '--url',
    url,
    '--data',
    dir,
  ]);
  expect(ok.stderr).toBe('');
  expect(ok.code).toBe(0);
}

describe('notes through the airlock command', () => {
  let served: Served | undefined;
  afterAll(async () => {
    served?.child.kill('SIGTERM');
    await served?.exited;
  });

  it('HTTP session approved from the CLI; verify-receipt accepts the receipt and rejects a tampered one', async () => {
    const dir = tempDir();
    served = await startServe(['--doors', 'notes', '--data', dir]);
    const url = served.url;
    const project = (await api(served, 'POST', 'notes/projects', { name: 'Thesis' })).body;
    await api(served, 'POST', 'notes/projects', { name: 'Private' });
    const mine = (
      await api(served, 'POST', 'notes/documents', { projectID: project.projectID, title: 'Ch 1' })
    ).body;
    await api(served, 'POST', 'notes/documents', { projectID: 'Private', title: 'Diary' });

    const client = await httpClient(served);
    const call = await agent(client);
    expect((await call('rooqi_status')).env.code).toBe('ready');
    expect((await call('rooqi_request_read_access')).env.code).toBe('approvalRequired');
    await approveFromCli(url, dir, 'read', 'Thesis');
    expect((await call('rooqi_list_approved_documents')).result).toEqual({
      [mine.documentID]: 'Ch 1',
    });
    expect((await call('rooqi_read_note', { documentID: mine.documentID })).result.revision).toBe(
      0,
    );

    expect((await call('rooqi_request_write_access')).env.code).toBe('approvalRequired');
    await approveFromCli(url, dir, 'write', project.projectID);
    const documentID = randomUUID();
    await call('rooqi_create_note', {
      operationID: randomUUID(),
      documentID,
      title: 'New',
      ...provenance,
    });
    const a1 = {
      operationID: randomUUID(),
      documentID,
      text: 'one',
      expectedVersion: 0,
      ...provenance,
    };
    const r1 = await call('rooqi_append_text', a1);
    const r2 = await call('rooqi_append_text', {
      ...a1,
      operationID: randomUUID(),
      text: 'two',
      expectedVersion: 1,
    });
    expect((await call('rooqi_append_text', a1)).env).toEqual(r1.env);
    expect(
      (await call('rooqi_append_text', { ...a1, operationID: randomUUID(), expectedVersion: 1 }))
        .env.code,
    ).toBe('versionConflict');
    const doc = (await api(served, 'GET', `notes/documents/${documentID}`)).body;
    expect(doc.blocks.map((b: { text: string }) => b.text)).toEqual(['one', 'two']);

    const good = join(dir, 'receipt.json');
    writeFileSync(good, JSON.stringify(r2.result));
    const valid = await run(['approvals', 'verify-receipt', good, '--url', url, '--data', dir]);
    expect(valid.stdout).toContain('Receipt is valid');
    expect(valid.code).toBe(0);
    const bad = join(dir, 'tampered.json');
    writeFileSync(bad, JSON.stringify({ ...r2.result, committedRevision: 7 }));
    const invalid = await run(['approvals', 'verify-receipt', bad, '--url', url, '--data', dir]);
    expect(invalid.stdout).toContain('NOT valid');
    expect(invalid.code).toBe(1);
    await client.close();
  });

  it('stdio session: the grant is approved from the CLI of a serve sharing the data folder', async () => {
    const dir = tempDir();
    const owner = await startServe(['--doors', 'notes', '--data', dir]);
    try {
      const project = (await api(owner, 'POST', 'notes/projects', { name: 'Shared' })).body;
      const doc = (
        await api(owner, 'POST', 'notes/documents', {
          projectID: project.projectID,
          title: 'S',
        })
      ).body;
      const client = new Client({ name: 'notes-stdio', version: '1' });
      await client.connect(
        new StdioClientTransport({
          command: process.execPath,
          args: [BIN, 'stdio', '--doors', 'notes', '--data', dir],
          env: testEnv() as Record<string, string>,
          stderr: 'pipe',
        }),
      );
      const call = await agent(client);
      expect((await client.listTools()).tools).toHaveLength(12);
      expect((await call('rooqi_read_note', { documentID: doc.documentID })).env.code).toBe(
        'notAuthorized',
      );
      expect((await call('rooqi_request_write_access')).env.code).toBe('approvalRequired');
      await approveFromCli(owner.url, dir, 'write', 'Shared');
      const receipt = (
        await call('rooqi_append_text', {
          operationID: randomUUID(),
          documentID: doc.documentID,
          text: 'over stdio',
          expectedVersion: 0,
          ...provenance,
        })
      ).result;
      expect(receipt.committedRevision).toBe(1);
      expect((await api(owner, 'POST', 'notes/receipts/verify', receipt)).body).toEqual({
        valid: true,
      });
      expect((await call('rooqi_append_text', { operationID: 'x' })).env.code).toBe(
        'malformedRequest',
      );
      await client.close();
    } finally {
      owner.child.kill('SIGTERM');
      await owner.exited;
    }
  });

  it('after SIGKILL mid-stream of appends and annotations, no acknowledged write is lost or duplicated and every operation is answerable', async () => {
    const dir = tempDir();
    let s = await startServe(['--doors', 'notes', '--data', dir]);
    const project = (await api(s, 'POST', 'notes/projects', { name: 'Crash' })).body;
    const textDoc = (
      await api(s, 'POST', 'notes/documents', { projectID: project.projectID, title: 'T' })
    ).body.documentID as string;
    const pdfDoc = (
      await api(s, 'POST', 'notes/documents', { projectID: project.projectID, title: 'P' })
    ).body.documentID as string;
    const surfaceID = (await api(s, 'POST', `notes/documents/${pdfDoc}/pdfs`, await samplePdf()))
      .body.surfaceID as string;

    const grantAll = async (at: Served, call: Awaited<ReturnType<typeof agent>>) => {
      for (const [tool, cap] of [
        ['rooqi_request_write_access', 'write'],
        ['rooqi_request_pdf_annotation_access', 'pdfAnnotate'],
      ] as const) {
        expect((await call(tool)).env.code).toBe('approvalRequired');
        const pending = (await api(at, 'GET', 'approvals')).body.approvals as {
          id: string;
          capability: string;
        }[];
        const id = pending.filter((a) => a.capability === cap).pop()!.id;
        expect(
          (await api(at, 'POST', `approvals/${id}/approve`, { resource: 'Crash' })).status,
        ).toBe(200);
      }
    };
    let client = await httpClient(s);
    let call = await agent(client);
    await grantAll(s, call);

    const sent = new Map<string, { tool: string; args: Json }>();
    const acked = new Map<string, Json>();
    let stop = false;
    const appender = async () => {
      let version = 0;
      while (!stop) {
        const args = {
          operationID: randomUUID(),
          documentID: textDoc,
          text: `t${version}`,
          expectedVersion: version,
          ...provenance,
        };
        sent.set(args.operationID, { tool: 'rooqi_append_text', args });
        try {
          const r = await call('rooqi_append_text', args);
          if (r.env.code !== 'ready') return;
          acked.set(args.operationID, r.result);
          version = r.result.committedRevision as number;
        } catch {
          return;
        }
      }
    };
    const annotator = async () => {
      const query = {
        documentID: pdfDoc,
        surfaceID,
        pageIndex: 0,
        rect: { x: 0, y: 0, width: 1_000_000, height: 300_000 },
      };
      while (!stop) {
        try {
          const read = await call('rooqi_read_pdf_page', query);
          if (read.env.code !== 'ready') return;
          const args = {
            operationID: randomUUID(),
            query,
            expectedVersion: read.result.revision,
            sourceAssetID: read.result.sourceAssetID,
            sourceDigest: read.result.sourceDigest,
            geometryDigest: read.result.geometryDigest,
            selectionTextDigest: read.result.selectionTextDigest,
            kind: 'underline',
            comment: '',
            ...provenance,
          };
          sent.set(args.operationID, { tool: 'rooqi_annotate_pdf', args });
          const r = await call('rooqi_annotate_pdf', args);
          if (r.env.code !== 'ready') return;
          acked.set(args.operationID, r.result);
        } catch {
          return;
        }
      }
    };
    const workers = [appender(), annotator()];
    const annotations = () => [...acked.values()].filter((r) => r.documentID === pdfDoc).length;
    await waitFor(() => acked.size >= 20 && annotations() >= 3, {
      timeoutMs: 60_000,
      intervalMs: 5,
      message: '20 acknowledged writes, 3 of them annotations',
    });
    s.child.kill('SIGKILL');
    stop = true;
    await Promise.all(workers);
    await s.exited;
    await client.close().catch(() => undefined);

    s = await startServe(['--doors', 'notes', '--data', dir]);
    served = s;
    client = await httpClient(s);
    call = await agent(client);
    await grantAll(s, call);

    const text = (await api(s, 'GET', `notes/documents/${textDoc}`)).body;
    const blockOps = (text.blocks as { operationID: string }[]).map((b) => b.operationID);
    expect(new Set(blockOps).size).toBe(blockOps.length);
    expect(text.revision).toBe(blockOps.length);
    const pdf = (await api(s, 'GET', `notes/documents/${pdfDoc}`)).body;
    const annotOps = (pdf.surfaces[0].annotations as { operationID: string }[]).map(
      (a) => a.operationID,
    );
    expect(new Set(annotOps).size).toBe(annotOps.length);
    const file = (await api(s, 'GET', `notes/documents/${pdfDoc}/pdfs/${surfaceID}`)).bytes!;
    expect((await annotationNames(file, 0)).sort()).toEqual([...annotOps].sort());

    for (const [id, receipt] of acked) {
      const doc = receipt.documentID === textDoc ? blockOps : annotOps;
      expect(doc).toContain(id);
      const state = await call('rooqi_query_pdf_operation', {
        documentID: receipt.documentID,
        operationID: id,
      });
      expect(state.result).toEqual({ state: 'committed', receipt });
      expect((await api(s, 'POST', 'notes/receipts/verify', receipt)).body.valid).toBe(true);
    }
    for (const [id, { tool, args }] of sent) {
      if (acked.has(id)) continue;
      const documentID = tool === 'rooqi_append_text' ? args.documentID : args.query.documentID;
      const state = (await call('rooqi_query_pdf_operation', { documentID, operationID: id }))
        .result;
      const present = (tool === 'rooqi_append_text' ? blockOps : annotOps).includes(id);
      if (present) expect(state.state).toBe('committed');
      else expect(['not-found', 'prepared-not-submitted']).toContain(state.state);
    }
    // a retry of an acknowledged write returns its original receipt
    const [someId, someReceipt] = [...acked.entries()][0]!;
    expect((await call(sent.get(someId)!.tool, sent.get(someId)!.args)).result).toEqual(
      someReceipt,
    );
    await client.close();
  }, 150_000);
});
