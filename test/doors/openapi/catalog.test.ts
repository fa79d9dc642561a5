/** The catalog compiler: determinism, reachability, naming, cycles, errors (spec/openapi.md "The catalog"). */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { describe, expect, it } from 'vitest';
import { catalogJson, compileSpec } from '../../../src/doors/openapi/compile/compile.js';
import { DocumentError } from '../../../src/doors/openapi/document/errors.js';
import { indexCatalog } from '../../../src/doors/openapi/catalog-index.js';
import { loadCatalog } from '../../../src/doors/openapi/load-catalog.js';
import { fixture } from './helpers.js';

const FIXTURES = [
  'petstore.yaml',
  'petstore-expanded.yaml',
  'real-petstore.json',
  'asana_oas.yaml',
  'discord_openapi.json',
];
const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

const dir = mkdtempSync(join(tmpdir(), 'airlock-openapi-'));
let n = 0;
function writeDoc(doc: unknown): string {
  const file = join(dir, `doc-${n++}.json`);
  writeFileSync(file, JSON.stringify(doc));
  return file;
}

describe('catalogs of the fixture documents', () => {
  for (const name of FIXTURES) {
    it(`${name}: builds twice byte-identical and reaches every operation exactly once`, async () => {
      const [a, b] = await Promise.all([compileSpec(fixture(name)), compileSpec(fixture(name))]);
      expect(catalogJson(a)).toBe(catalogJson(b));

      const text = readFileSync(fixture(name), 'utf8');
      const doc = (
        name.endsWith('.json') ? JSON.parse(text) : parseYaml(text, { maxAliasCount: -1 })
      ) as {
        paths: Record<string, Record<string, unknown>>;
      };
      const operations = Object.entries(doc.paths).flatMap(([path, item]) =>
        METHODS.filter((m) => item[m] !== undefined).map((m) => `${m.toUpperCase()} ${path}`),
      );
      const reached = a.resources.flatMap((r) => r.methods.map((m) => `${m.http} ${m.path}`));
      expect(reached.length).toBe(operations.length);
      expect(new Set(reached)).toEqual(new Set(operations));
      const names = a.resources.flatMap((r) => r.methods.map((m) => `${r.path}.${m.name}`));
      expect(new Set(names).size).toBe(names.length);
      for (const m of a.resources.flatMap((r) => r.methods)) {
        expect(m.body?.fields.length ?? 0).toBeLessThanOrEqual(80);
        for (const f of m.body?.fields ?? []) expect(f.type.length).toBeLessThanOrEqual(160);
        expect(m.returns.length).toBeLessThanOrEqual(160);
      }
    }, 60_000);
  }
});

const PLANE = {
  openapi: '3.0.3',
  info: { title: 'Plane', version: '1' },
  servers: [{ url: 'https://api.plane.so' }],
  components: {
    securitySchemes: { ApiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key' } },
    schemas: {
      WorkItem: {
        type: 'object',
        required: ['name'],
        properties: {
          id: { type: 'string', readOnly: true },
          name: { type: 'string', maxLength: 255 },
          priority: { type: 'string', enum: ['urgent', 'high', 'low'] },
          parent: { $ref: '#/components/schemas/WorkItem' },
        },
      },
      Page: {
        type: 'object',
        properties: {
          results: { type: 'array', items: { $ref: '#/components/schemas/WorkItem' } },
          next_cursor: { type: 'string' },
          next_page_results: { type: 'boolean' },
        },
      },
    },
  },
  security: [{ ApiKey: [] }],
  paths: {
    '/api/v1/workspaces/{slug}/projects/{project_id}/work-items/': {
      parameters: [
        { name: 'slug', in: 'path', required: true, schema: { type: 'string' } },
        { name: 'project_id', in: 'path', required: true, schema: { type: 'string' } },
      ],
      get: {
        operationId: 'listWorkItems',
        summary: 'List work items',
        parameters: [
          { name: 'cursor', in: 'query', schema: { type: 'string' } },
          { name: 'per_page', in: 'query', schema: { type: 'integer', maximum: 100 } },
          {
            name: 'order_by',
            in: 'query',
            schema: { type: 'string', enum: ['created_at', '-created_at'] },
          },
          { name: 'X-API-Key', in: 'header', schema: { type: 'string' } },
        ],
        responses: {
          '200': {
            description: 'ok',
            content: { 'application/json': { schema: { $ref: '#/components/schemas/Page' } } },
          },
        },
      },
      post: {
        operationId: 'createWorkItem',
        summary: 'Create a work item',
        requestBody: {
          required: true,
          content: { 'application/json': { schema: { $ref: '#/components/schemas/WorkItem' } } },
        },
        responses: { '201': { description: 'created' } },
      },
    },
    '/api/v1/workspaces/{slug}/projects/{project_id}/work-items/{id}/': {
      parameters: [
        { name: 'slug', in: 'path', required: true, schema: { type: 'string' } },
        { name: 'project_id', in: 'path', required: true, schema: { type: 'string' } },
        { name: 'id', in: 'path', required: true, schema: { type: 'string' } },
      ],
      get: { operationId: 'getWorkItem', responses: { '200': { description: 'ok' } } },
      patch: { operationId: 'patchWorkItem', responses: { '200': { description: 'ok' } } },
      put: { operationId: 'putWorkItem', responses: { '200': { description: 'ok' } } },
      delete: { operationId: 'deleteWorkItem', responses: { '204': { description: 'gone' } } },
    },
    '/api/v1/workspaces/{slug}/projects/{project_id}/work-items/{id}/archive/': {
      post: { operationId: 'archiveWorkItem', responses: { '204': { description: 'archived' } } },
    },
    '/api/v1/workspaces/{slug}/projects/{project_id}/labels/{label_id}/unlink': {
      post: { operationId: 'unlinkLabel', responses: { '204': { description: 'ok' } } },
    },
  },
};

describe('naming and shapes', () => {
  it('resources come from static segments without the version prefix, camelCased and dot-joined', async () => {
    const c = await compileSpec(writeDoc(PLANE));
    expect(c.resources.map((r) => r.path)).toEqual([
      'workspaces.projects.labels',
      'workspaces.projects.workItems',
    ]);
  });

  it('methods: list/create/retrieve/update/replace/delete, a trailing action segment is its own method', async () => {
    const c = await compileSpec(writeDoc(PLANE));
    const items = c.resources.find((r) => r.path === 'workspaces.projects.workItems')!;
    expect(items.methods.map((m) => m.name)).toEqual([
      'list',
      'create',
      'retrieve',
      'update',
      'replace',
      'delete',
      'archive',
    ]);
    expect(
      c.resources.find((r) => r.path === 'workspaces.projects.labels')!.methods.map((m) => m.name),
    ).toEqual(['unlink']);
  });

  it('a paginated list also gets iterate', async () => {
    const index = indexCatalog(await compileSpec(writeDoc(PLANE)));
    const r = index.resource('workspaces.projects.workItems')!;
    expect([...r.methods.keys()]).toContain('iterate');
    expect(r.methods.get('list')!.pagination).toEqual({
      style: 'hasMore',
      items: 'results',
      param: 'cursor',
      sizeParam: 'per_page',
      next: 'next_cursor',
      more: 'next_page_results',
    });
  });

  it('path ids in URL order, named without _id and camelCased, original name kept; auth headers left out of params', async () => {
    const c = await compileSpec(writeDoc(PLANE));
    const list = c.resources.find((r) => r.path === 'workspaces.projects.workItems')!.methods[0]!;
    expect(list.pathIds.map((p) => [p.name, p.original])).toEqual([
      ['slug', 'slug'],
      ['project', 'project_id'],
    ]);
    expect(list.params.map((p) => p.name)).toEqual(['cursor', 'per_page', 'order_by']);
    expect(list.params.find((p) => p.name === 'order_by')!.allowed).toEqual([
      'created_at',
      '-created_at',
    ]);
  });

  it('kinds: read for GET, destructive for DELETE and unlink, else write', async () => {
    const c = await compileSpec(writeDoc(PLANE));
    const kinds = Object.fromEntries(
      c.resources.flatMap((r) => r.methods.map((m) => [`${r.path}.${m.name}`, m.kind])),
    );
    expect(kinds).toMatchObject({
      'workspaces.projects.workItems.list': 'read',
      'workspaces.projects.workItems.create': 'write',
      'workspaces.projects.workItems.delete': 'destructive',
      'workspaces.projects.labels.unlink': 'destructive',
      'workspaces.projects.workItems.archive': 'write',
    });
  });

  it('body fields with types and required; read-only fields left out; example is valid', async () => {
    const c = await compileSpec(writeDoc(PLANE));
    const create = c.resources
      .find((r) => r.path === 'workspaces.projects.workItems')!
      .methods.find((m) => m.name === 'create')!;
    expect(create.body!.fields).toEqual([
      { name: 'name', type: 'string', required: true },
      { name: 'priority', type: '"urgent" | "high" | "low"', required: false },
      { name: 'parent', type: 'WorkItem', required: false },
    ]);
    expect(create.example).toEqual({
      slug: 'example',
      project: 'example',
      data: { name: 'example' },
    });
  });

  it('a $ref cycle is cut and named, never expanded forever', async () => {
    const c = await compileSpec(writeDoc(PLANE));
    const create = c.resources
      .find((r) => r.path === 'workspaces.projects.workItems')!
      .methods.find((m) => m.name === 'create')!;
    expect(
      (create.body!.schema as { properties: Record<string, unknown> }).properties.parent,
    ).toEqual({ 'x-cycle': '#/components/schemas/WorkItem' });
  });

  it('collisions fall back to the operationId for every operation involved', async () => {
    const doc = {
      openapi: '3.1.0',
      info: { title: 't', version: '1' },
      paths: {
        '/webhooks/{id}': { get: { operationId: 'get_webhook', responses: {} } },
        '/webhooks/{id}/{token}': { get: { operationId: 'get_webhook_by_token', responses: {} } },
      },
    };
    const c = await compileSpec(writeDoc(doc));
    expect(c.resources[0]!.methods.map((m) => m.name)).toEqual(['getWebhook', 'getWebhookByToken']);
  });

  it('Swagger 2.0: body and formData parameters become the body, securityDefinitions the schemes', async () => {
    const doc = {
      swagger: '2.0',
      info: { title: 'old', version: '1' },
      host: 'api.example.com',
      basePath: '/v2',
      securityDefinitions: {
        key: { type: 'apiKey', in: 'query', name: 'api_key' },
        basic: { type: 'basic' },
      },
      paths: {
        '/pets': {
          post: {
            parameters: [
              { name: 'body', in: 'body', required: true, schema: { $ref: '#/definitions/Pet' } },
            ],
            responses: { '200': { description: 'ok', schema: { $ref: '#/definitions/Pet' } } },
          },
          get: {
            parameters: [
              {
                name: 'tags',
                in: 'query',
                type: 'array',
                items: { type: 'string' },
                collectionFormat: 'csv',
              },
            ],
            responses: {
              '200': {
                description: 'ok',
                schema: { type: 'array', items: { $ref: '#/definitions/Pet' } },
              },
            },
          },
        },
        '/pets/{petId}': {
          post: {
            consumes: ['application/x-www-form-urlencoded'],
            parameters: [
              { name: 'petId', in: 'path', required: true, type: 'integer' },
              { name: 'name', in: 'formData', type: 'string', required: true },
            ],
            responses: { '200': { description: 'ok' } },
          },
        },
      },
      definitions: {
        Pet: { type: 'object', required: ['name'], properties: { name: { type: 'string' } } },
      },
    };
    const c = await compileSpec(writeDoc(doc));
    expect(c.servers).toEqual(['https://api.example.com/v2']);
    expect(c.securitySchemes).toEqual({
      key: { type: 'apiKey', in: 'query', name: 'api_key' },
      basic: { type: 'http', scheme: 'basic' },
    });
    const pets = c.resources.find((r) => r.path === 'pets')!;
    expect(pets.methods.map((m) => [m.name, m.returns])).toEqual([
      ['list', 'Pet[]'],
      ['create', 'Pet{name: string}'],
      ['postPets', 'void'],
    ]);
    const form = pets.methods.find((m) => m.http === 'POST' && m.path === '/pets/{petId}')!;
    expect(form.body).toMatchObject({
      contentType: 'application/x-www-form-urlencoded',
      required: true,
      fields: [{ name: 'name', type: 'string', required: true }],
    });
    expect(form.pathIds[0]).toMatchObject({ name: 'pet', original: 'petId', type: 'integer' });
  });

  it('a compiled catalog loads back as the same catalog', async () => {
    const file = join(dir, 'catalog.json');
    const c = await compileSpec(writeDoc(PLANE));
    writeFileSync(file, catalogJson(c));
    expect(await loadCatalog(file)).toEqual(c);
  });
});

describe('documents it cannot read', () => {
  const expectDocError = async (
    source: string,
    match: { file?: string; pointer?: string; message: RegExp },
  ) => {
    const error = await compileSpec(source).then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(DocumentError);
    const d = error as DocumentError;
    if (match.file) expect(d.file).toBe(match.file);
    if (match.pointer !== undefined) expect(d.pointer).toBe(match.pointer);
    expect(d.message).toMatch(match.message);
  };

  it('a $ref that points nowhere names the file and the JSON pointer of the $ref', async () => {
    const file = writeDoc({
      openapi: '3.0.0',
      info: { title: 't', version: '1' },
      paths: {
        '/a': {
          get: {
            responses: {
              '200': {
                description: 'x',
                content: { 'application/json': { schema: { $ref: '#/components/schemas/Nope' } } },
              },
            },
          },
        },
      },
    });
    await expectDocError(file, {
      file,
      pointer: '/paths/~1a/get/responses/200/content/application~1json/schema',
      message: /\$ref '#\/components\/schemas\/Nope' points to nothing/,
    });
  });

  it('invalid YAML, a missing file, no paths, an external $ref without the flag', async () => {
    const bad = join(dir, 'bad.yaml');
    writeFileSync(bad, 'openapi: 3.0.0\npaths: [\n');
    await expectDocError(bad, { file: bad, message: /not valid YAML/ });
    await expectDocError(join(dir, 'missing.yaml'), { message: /no such file/ });
    await expectDocError(writeDoc({ openapi: '3.0.0', info: {} }), {
      pointer: '/paths',
      message: /missing/,
    });
    await expectDocError(writeDoc({ info: {}, paths: {} }), {
      message: /not an OpenAPI 3.x or Swagger 2.0 document/,
    });
    await expectDocError(
      writeDoc({
        openapi: '3.0.0',
        info: {},
        paths: { '/a': { get: { responses: { '200': { $ref: 'other.yaml#/R' } } } } },
      }),
      { pointer: '/paths/~1a/get/responses/200', message: /--allow-external-refs/ },
    );
  });

  it('external $refs are followed with the flag', async () => {
    writeFileSync(
      join(dir, 'shared.json'),
      JSON.stringify({ Pet: { type: 'object', properties: { name: { type: 'string' } } } }),
    );
    const main = join(dir, 'main-ext.json');
    writeFileSync(
      main,
      JSON.stringify({
        openapi: '3.0.0',
        info: { title: 't', version: '1' },
        paths: {
          '/pets': {
            get: {
              responses: {
                '200': {
                  description: 'ok',
                  content: { 'application/json': { schema: { $ref: 'shared.json#/Pet' } } },
                },
              },
            },
          },
        },
      }),
    );
    const c = await compileSpec(main, { allowExternalRefs: true });
    expect(c.resources[0]!.methods[0]!.returns).toBe('Pet{name?: string}');
  });
});
