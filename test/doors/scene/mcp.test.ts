/** The scene tools through a real MCP client over HTTP. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import type { Client } from '@modelcontextprotocol/client';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { comicPage, pageOf, textNodeOf } from './helpers.js';
import {
  json,
  post,
  sceneServer,
  uploadPages,
  trustHistoryMoves,
  type SceneServer,
} from './server.js';
import { structuredOf, toolJson } from '../../helpers/results.js';

let s: SceneServer;
let client: Client;
beforeAll(async () => {
  s = await sceneServer();
  client = await s.mcp();
  await trustHistoryMoves(s);
});
afterAll(async () => {
  await s.close();
});

const call = (name: string, args: Record<string, unknown> = {}) =>
  client.callTool({ name, arguments: args });

async function protocolError(name: string, args: Record<string, unknown> = {}) {
  try {
    await call(name, args);
  } catch (error) {
    return { code: (error as { code?: number }).code, message: (error as Error).message };
  }
  return null;
}

describe('scene tools over MCP', () => {
  it('lists the six reference tools and the added read tools, with the Op schema published', async () => {
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(
      [
        'koharu.apply',
        'koharu.cancel_job',
        'koharu.close_project',
        'koharu.export',
        'koharu.get_job',
        'koharu.get_scene',
        'koharu.import_pages',
        'koharu.list_engines',
        'koharu.open_project',
        'koharu.redo',
        'koharu.start_pipeline',
        'koharu.undo',
      ].sort(),
    );
    const apply = tools.find((t) => t.name === 'koharu.apply')!;
    const schema = JSON.stringify(apply.inputSchema);
    for (const tag of ['addNode', 'batch', 'updateProjectMeta'])
      expect(schema).toContain(`"${tag}"`);
    // PascalCase tags (the reference docs' spelling) are accepted, said once in the
    // description, and not listed twice: the published op object stays open to them.
    expect(apply.description).toMatch(/PascalCase/);
    const check = new Ajv2020({ strict: false, validateFormats: false }).compile(apply.inputSchema);
    const page = randomUUID();
    expect(check({ op: { RemovePage: { id: page, prevPage: {} } } })).toBe(true);
    expect(check({ op: { removePage: { id: page } }, extra: 1 })).toBe(false);
  });

  it('pins the reference tools’ argument names, required fields and result schemas', async () => {
    const { tools } = await client.listTools();
    const shape = (name: string) => {
      const t = tools.find((x) => x.name === name)!;
      const input = t.inputSchema as {
        properties?: object;
        required?: string[];
        additionalProperties?: boolean;
      };
      const output = t.outputSchema as { properties?: object; required?: string[] } | undefined;
      return {
        args: Object.keys(input.properties ?? {}),
        required: input.required ?? [],
        strict: input.additionalProperties === false,
        result: Object.keys(output?.properties ?? {}),
      };
    };
    // operationID (optional) is the one field Airlock adds to Koharu's inputs.
    expect(shape('koharu.apply')).toEqual({
      args: ['op', 'operationID'],
      required: ['op'],
      strict: true,
      result: ['epoch'],
    });
    expect(shape('koharu.undo')).toEqual({
      args: ['operationID'],
      required: [],
      strict: true,
      result: ['epoch'],
    });
    expect(shape('koharu.redo')).toEqual({
      args: ['operationID'],
      required: [],
      strict: true,
      result: ['epoch'],
    });
    expect(shape('koharu.open_project')).toEqual({
      args: ['path', 'createName'],
      required: ['path'],
      strict: true,
      result: ['name', 'path'],
    });
    expect(shape('koharu.close_project')).toEqual({
      args: [],
      required: [],
      strict: true,
      result: [],
    });
    expect(shape('koharu.start_pipeline')).toEqual({
      args: [
        'steps',
        'pages',
        'sourceLanguage',
        'targetLanguage',
        'systemPrompt',
        'defaultFont',
        'textNodeIds',
      ],
      required: ['steps'],
      strict: true,
      result: ['jobId'],
    });
  });

  it('answers JSON-RPC −32600 "invalid request: no project open" for every tool that needs a project', async () => {
    const needing: [string, Record<string, unknown>][] = [
      ['koharu.apply', { op: { addPage: { page: pageOf() } } }],
      ['koharu.undo', {}],
      ['koharu.redo', {}],
      ['koharu.close_project', {}],
      ['koharu.start_pipeline', { steps: ['tesseract'] }],
      ['koharu.get_scene', {}],
      ['koharu.export', { format: 'khr' }],
    ];
    for (const [name, args] of needing) {
      const error = await protocolError(name, args);
      expect(error, name).not.toBeNull();
      expect(error!.code, name).toBe(-32600);
      expect(error!.message, name).toContain('invalid request: no project open');
    }
    const res = await s.fetch(`${s.base}/api/v1/scene.json`);
    expect(await res.json()).toEqual({
      status: 409,
      code: 'noProject',
      message: 'invalid request: no project open',
    });
  });

  it('lists engines without a project', async () => {
    const r = structuredOf(await call('koharu.list_engines'));
    expect(r.engines).toEqual([
      {
        id: 'tesseract',
        name: expect.any(String),
        needs: ['SourceImage'],
        produces: ['TextBoxes', 'OcrText'],
        languages: ['en', 'ja', 'zh', 'zh-Hant', 'ko'],
      },
      {
        id: 'dbnet',
        name: expect.any(String),
        needs: ['SourceImage'],
        produces: ['TextBoxes', 'OcrText'],
        languages: ['en', 'ja', 'zh', 'zh-Hant', 'ko'],
      },
      { id: 'llm', name: expect.any(String), needs: ['OcrText'], produces: ['Translations'] },
      {
        id: 'fill',
        name: expect.any(String),
        needs: ['SourceImage', 'TextBoxes'],
        produces: ['Inpainted'],
      },
      {
        id: 'renderer',
        name: expect.any(String),
        needs: ['SourceImage', 'Translations'],
        produces: ['FinalRender'],
      },
    ]);
  });

  it('refuses a project path outside the roots', async () => {
    const r = await call('koharu.open_project', { path: '/etc', createName: 'x' });
    expect(r.isError).toBe(true);
    expect(toolJson(r)).toMatchObject({ code: 'malformedRequest' });
  });

  it('applies {"AddPage": …} as the reference docs write it, then undo/redo walk the epoch and stop at the boundary', async () => {
    await call('koharu.open_project', { path: 'ops', createName: 'Ops' });
    const page = pageOf();
    expect(structuredOf(await call('koharu.apply', { op: { AddPage: { page, at: 0 } } }))).toEqual({
      epoch: 1,
    });
    expect(structuredOf(await call('koharu.undo'))).toEqual({ epoch: 2 });
    expect(structuredOf(await call('koharu.undo'))).toEqual({ epoch: null });
    expect(structuredOf(await call('koharu.redo'))).toEqual({ epoch: 3 });
    expect(structuredOf(await call('koharu.redo'))).toEqual({ epoch: null });
    const view = structuredOf(await call('koharu.get_scene', { pages: [page.id] })) as {
      epoch: number;
      scene: { pages: unknown[] };
    };
    expect(view.epoch).toBe(3);
    expect(view.scene.pages).toEqual([page]);
  });

  it('refuses bad ops with the op named and nothing applied', async () => {
    const before = structuredOf(await call('koharu.get_scene'));
    const pageId = (before.scene as { pages: { id: string }[] }).pages[0]!.id;
    const bad: [Record<string, unknown>, RegExp][] = [
      [{ addSticker: {} }, /addSticker/],
      [
        {
          updateNode: { page: pageId, id: randomUUID(), patch: { data: { text: { text: 'x' } } } },
        },
        /updateNode.*nodeNotFound/,
      ],
      [{ removePage: { id: randomUUID() } }, /removePage.*pageNotFound/],
      [{ addNode: { page: pageId, node: textNodeOf(), at: 5 } }, /addNode.*indexOutOfRange/],
      [
        {
          batch: {
            label: 'half',
            ops: [
              { addNode: { page: pageId, node: textNodeOf() } },
              { removePage: { id: randomUUID() } },
            ],
          },
        },
        /batch 'half' op 1 \(removePage\).*pageNotFound/,
      ],
    ];
    for (const [op, pattern] of bad) {
      const r = await call('koharu.apply', { op });
      expect(r.isError, JSON.stringify(op)).toBe(true);
      expect(String(toolJson(r).message)).toMatch(pattern);
    }
    const text = textNodeOf();
    await call('koharu.apply', { op: { addNode: { page: pageId, node: text } } });
    const wrongKind = await call('koharu.apply', {
      op: { updateNode: { page: pageId, id: text.id, patch: { data: { image: { opacity: 1 } } } } },
    });
    expect(toolJson(wrongKind)).toMatchObject({ opError: 'nodeKindMismatch', op: 'updateNode' });
    await call('koharu.undo');
    const after = structuredOf(await call('koharu.get_scene')).scene as { pages: unknown };
    expect(after.pages).toEqual((before.scene as { pages: unknown }).pages);
  });

  it('refuses a second source image on a page (invariant)', async () => {
    const png = await comicPage([], 40, 30);
    await uploadPages(s, [{ name: 'src.png', bytes: png }]);
    const scene = structuredOf(await call('koharu.get_scene')).scene as {
      pages: { id: string; nodes: { kind: { image?: { blob: string } } }[] }[];
    };
    const uploaded = scene.pages.at(-1)!;
    const blob = uploaded.nodes[0]!.kind.image!.blob;
    const second = {
      id: randomUUID(),
      transform: { x: 0, y: 0, width: 40, height: 30, rotationDeg: 0 },
      visible: true,
      kind: { image: { role: 'source', blob, opacity: 1, naturalWidth: 40, naturalHeight: 30 } },
    };
    const r = await call('koharu.apply', { op: { addNode: { page: uploaded.id, node: second } } });
    expect(toolJson(r)).toMatchObject({ opError: 'invariant', op: 'addNode' });
  });

  it('validates pipeline steps before any job exists: unknown, duplicate, unmet need', async () => {
    const jobsBefore = (await s.tk.kernel.jobs.list()).length;
    const cases: [string[], RegExp][] = [
      [['tesseract', 'ocr-magic'], /Unknown pipeline step 'ocr-magic'/],
      [['tesseract', 'tesseract'], /'tesseract' is listed twice/],
      [['renderer'], /'renderer' needs Translations/],
      [['llm', 'fill'], /'llm' needs OcrText/],
    ];
    for (const [steps, pattern] of cases) {
      const r = await call('koharu.start_pipeline', { steps });
      expect(r.isError, steps.join()).toBe(true);
      expect(String(toolJson(r).message)).toMatch(pattern);
    }
    const rest = await post(s, 'pipelines', { steps: ['nope'] });
    expect(rest.status).toBe(400);
    expect(await json(rest)).toMatchObject({ status: 400, code: 'malformedRequest' });
    expect((await s.tk.kernel.jobs.list()).length).toBe(jobsBefore);
  });

  it('get_job and cancel_job answer notFound for an unknown job', async () => {
    const id = randomUUID();
    expect(toolJson(await call('koharu.get_job', { jobId: id }))).toMatchObject({
      code: 'notFound',
    });
    expect(toolJson(await call('koharu.cancel_job', { jobId: id }))).toMatchObject({
      code: 'notFound',
    });
  });

  it('export returns a resource link to the file, also served over HTTP', async () => {
    const r = (await call('koharu.export', { format: 'khr' })) as {
      content: { type: string; uri?: string; mimeType?: string }[];
      structuredContent: { url: string; uri: string; bytes: number };
    };
    const link = r.content.find((c) => c.type === 'resource_link')!;
    expect(link).toMatchObject({ uri: r.structuredContent.uri, mimeType: 'application/zip' });
    expect(link.uri).toMatch(/^file:\/\//);
    const res = await s.fetch(`${s.base}${r.structuredContent.url}`);
    expect(res.status).toBe(200);
    expect((await res.arrayBuffer()).byteLength).toBe(r.structuredContent.bytes);
  });

  it('close_project closes; the next call that needs a project answers −32600', async () => {
    expect(structuredOf(await call('koharu.close_project'))).toEqual({});
    expect((await protocolError('koharu.get_scene'))?.code).toBe(-32600);
  });
});
