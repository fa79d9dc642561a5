/**
 * The notes door on PostgreSQL (scale-out storage): the same records, journal
 * and blobs as on SQLite, so one short session proves the door is
 * store-agnostic — writes, retries, conflicts, a PDF annotation and receipts.
 */
import { afterAll, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { createNotesDoor } from '../../../src/doors/notes/index.js';
import { createKernel, type Kernel } from '../../../src/kernel/kernel.js';
import { createEventBus } from '../../../src/kernel/events/events.js';
import { silentLogger } from '../../../src/kernel/logger.js';
import { openStore } from '../../../src/store/open.js';
import { connection } from '../../../src/kernel/connection.js';
import type { RestResponse, ServedDoor, ToolResult } from '../../../src/transport/surface.js';
import { presentOutcome } from '../../../src/transport/mcp/present.js';
import { describeWithPostgres, dropSchema, PG_URL, uniqueSchema } from '../../services/postgres.js';
import { samplePdf } from './fixtures.js';
import { provenance } from './harness.js';

const schema = uniqueSchema('notes');
const dir = mkdtempSync(join(tmpdir(), 'airlock-notes-pg-'));
const cleanup: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const c of cleanup.reverse()) await c().catch(() => undefined);
  await dropSchema(schema).catch(() => undefined);
  rmSync(dir, { recursive: true, force: true });
});

await describeWithPostgres('notes on PostgreSQL', () => {
  it('runs writes, retries, conflicts, an annotation and receipts on PostgreSQL', async () => {
    const { store, blobs } = await openStore({ data: dir, store: `${PG_URL}?schema=${schema}` });
    const events = await createEventBus();
    const door = createNotesDoor();
    const kernel: Kernel<ServedDoor> = createKernel<ServedDoor>({
      store,
      blobs,
      events,
      logger: silentLogger,
    });
    kernel.mount(door);
    await kernel.start();
    cleanup.push(
      () => store.close(),
      () => events.close(),
      () => kernel.close(),
    );
    /** A route whose answers this test expects to be responses, not failures. */
    const route = (method: string, path: string) => {
      const found = door.http!.routes!.find((r) => r.method === method && r.path === path)!;
      return {
        handler: async (request: Parameters<typeof found.handler>[0]) =>
          (await found.handler(request)) as RestResponse,
      };
    };
    const conn = connection('pg:1', 'internal');
    const call = async (tool: string, args: unknown) => {
      const outcome = await kernel.call('notes', tool, args, { connection: conn });
      const r = presentOutcome(door.mcp?.presenter, tool, outcome) as ToolResult;
      const env = JSON.parse(String(r.content[0]!.text));
      return { env, result: env.resultJSON ? JSON.parse(env.resultJSON) : undefined };
    };
    const grant = async (tool: string, projectID: string) => {
      expect((await call(tool, {})).env.code).toBe('approvalRequired');
      const [pending] = await kernel.consent.pending();
      await kernel.consent.approve(pending!.id, { id: projectID, name: 'PG' });
    };

    const project = (
      await route('POST', 'notes/projects').handler({
        params: {},
        query: new URLSearchParams(),
        body: { name: 'PG' },
        headers: {},
      })
    ).body as { projectID: string };
    await grant('rooqi_request_write_access', project.projectID);
    await grant('rooqi_request_pdf_annotation_access', project.projectID);
    const documentID = randomUUID();
    await call('rooqi_create_note', {
      operationID: randomUUID(),
      documentID,
      title: 'pg',
      ...provenance,
    });
    const a = {
      operationID: randomUUID(),
      documentID,
      text: 'on postgres',
      expectedVersion: 0,
      ...provenance,
    };
    const first = await call('rooqi_append_text', a);
    expect(first.result.committedRevision).toBe(1);
    expect((await call('rooqi_append_text', a)).env).toEqual(first.env);
    expect((await call('rooqi_append_text', { ...a, operationID: randomUUID() })).env.code).toBe(
      'versionConflict',
    );

    const pdf = await samplePdf();
    const up = (
      await route('POST', 'notes/documents/{id}/pdfs').handler({
        params: { id: documentID },
        query: new URLSearchParams(),
        body: Buffer.from(pdf),
        headers: {},
      })
    ).body as { surfaceID: string };
    const query = {
      documentID,
      surfaceID: up.surfaceID,
      pageIndex: 0,
      rect: { x: 0, y: 0, width: 1_000_000, height: 150_000 },
    };
    const read = (await call('rooqi_read_pdf_page', query)).result;
    expect(read.selectedText).toBe('Alpha Beta');
    const annotated = await call('rooqi_annotate_pdf', {
      operationID: randomUUID(),
      query,
      expectedVersion: read.revision,
      sourceAssetID: read.sourceAssetID,
      sourceDigest: read.sourceDigest,
      geometryDigest: read.geometryDigest,
      selectionTextDigest: read.selectionTextDigest,
      kind: 'highlight',
      comment: '',
      ...provenance,
    });
    expect(annotated.env.code).toBe('ready');
    const file = await route('GET', 'notes/documents/{id}/pdfs/{surfaceID}').handler({
      params: { id: documentID, surfaceID: up.surfaceID },
      query: new URLSearchParams(),
      body: undefined,
      headers: {},
    });
    expect(Buffer.from(file.raw!.bytes.subarray(0, pdf.length)).equals(Buffer.from(pdf))).toBe(
      true,
    );
    const verify = route('POST', 'notes/receipts/verify');
    expect(
      (
        await verify.handler({
          params: {},
          query: new URLSearchParams(),
          body: annotated.result,
          headers: {},
        })
      ).body,
    ).toEqual({ valid: true });
  });
});
