/** `GET /api/v1/openapi.json`: an OpenAPI 3.1 document of the REST routes actually mounted. */
import type { RestRoute } from '../surface.js';
import { SERVER_INFO } from '../mcp/mcp-server.js';

export function openApiDocument(routes: RestRoute[]): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of [...routes].sort((a, b) => a.path.localeCompare(b.path))) {
    const path = `/api/v1/${route.path}`;
    const params = [...route.path.matchAll(/\{([^}]+)\}/g)].map((m) => ({
      name: m[1],
      in: 'path',
      required: true,
      schema: { type: 'string' },
    }));
    const audience = route.audience ?? 'owner';
    const op = {
      summary: route.summary,
      // Who may call it (authority.md §1): the owner only, an agent or the owner, or anyone.
      'x-audience': audience,
      ...(audience === 'public' ? { security: [{}] } : {}),
      operationId: `${route.method.toLowerCase()}_${route.path.replace(/[{}]/g, '').replace(/[^a-zA-Z0-9]+/g, '_')}`,
      ...(params.length ? { parameters: params } : {}),
      responses: {
        '200': { description: 'OK' },
        default: {
          description: 'Error `{status, code, message}`',
          content: {
            'application/json': {
              schema: {
                type: 'object',
                required: ['status', 'code', 'message'],
                properties: {
                  status: { type: 'integer' },
                  code: { type: 'string' },
                  message: { type: 'string' },
                },
              },
            },
          },
        },
      },
    };
    (paths[path] ??= {})[route.method.toLowerCase()] = op;
  }
  paths['/api/v1/events'] = {
    get: {
      summary: 'Server-sent events (snapshot first; Last-Event-ID replay)',
      operationId: 'get_events',
      'x-audience': 'agent',
      responses: { '200': { description: 'text/event-stream' } },
    },
  };
  return {
    openapi: '3.1.0',
    info: { title: 'Airlock workspace API', version: SERVER_INFO.version },
    servers: [{ url: '/' }],
    components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } } },
    // An agent's token, or the owner's (token or the web UI's session cookie).
    security: [{ bearer: [] }],
    paths,
  };
}
