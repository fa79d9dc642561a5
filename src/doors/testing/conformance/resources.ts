/**
 * Fixture resources (resources-*, sep-2164, caching): two static resources,
 * one "watched" resource clients may subscribe to (2025-era), and the
 * template `test://template/{id}/data`. An unknown URI is -32602 with the
 * URI in `data` (SEP-2164), never an empty `contents`.
 */
import { ResourceNotFoundError } from '@modelcontextprotocol/server';
import type { ReadResourceResult, Resource, Server } from '@modelcontextprotocol/server';
import { PNG_BASE64 } from './media.js';

interface StaticResource extends Resource {
  read(): ReadResourceResult['contents'][number];
}

const STATIC: StaticResource[] = [
  {
    uri: 'test://static-text',
    name: 'static-text',
    title: 'Static Text Resource',
    description: 'A static text resource for testing',
    mimeType: 'text/plain',
    read: () => ({
      uri: 'test://static-text',
      mimeType: 'text/plain',
      text: 'This is the content of the static text resource.',
    }),
  },
  {
    uri: 'test://static-binary',
    name: 'static-binary',
    title: 'Static Binary Resource',
    description: 'A static binary resource (a 1x1 PNG) for testing',
    mimeType: 'image/png',
    read: () => ({ uri: 'test://static-binary', mimeType: 'image/png', blob: PNG_BASE64 }),
  },
  {
    uri: 'test://watched-resource',
    name: 'watched-resource',
    title: 'Watched Resource',
    description: 'A resource clients may subscribe to (its content never changes)',
    mimeType: 'text/plain',
    read: () => ({
      uri: 'test://watched-resource',
      mimeType: 'text/plain',
      text: 'Watched resource content',
    }),
  },
];

const TEMPLATE = {
  uriTemplate: 'test://template/{id}/data',
  name: 'template',
  title: 'Resource Template',
  description: 'A resource template with parameter substitution',
  mimeType: 'application/json',
};
const TEMPLATE_PATTERN = /^test:\/\/template\/([^/]+)\/data$/;

export function registerResources(server: Server): void {
  // Per server instance: a 2025-era session, or one 2026-07-28 request (which cannot subscribe).
  const subscriptions = new Set<string>();

  server.setRequestHandler('resources/list', async () => ({
    resources: STATIC.map(({ read: _read, ...resource }) => resource),
  }));

  server.setRequestHandler('resources/templates/list', async () => ({
    resourceTemplates: [TEMPLATE],
  }));

  server.setRequestHandler('resources/read', async (request) => {
    const { uri } = request.params;
    const known = STATIC.find((r) => r.uri === uri);
    if (known) return { contents: [known.read()] };
    const id = TEMPLATE_PATTERN.exec(uri)?.[1];
    if (id !== undefined) {
      const value = decodeURIComponent(id);
      const text = JSON.stringify({ id: value, templateTest: true, data: `Data for ID: ${value}` });
      return { contents: [{ uri, mimeType: 'application/json', text }] };
    }
    throw new ResourceNotFoundError(
      uri,
      `Resource not found: ${uri}; call resources/list or resources/templates/list.`,
    );
  });

  server.setRequestHandler('resources/subscribe', async (request) => {
    subscriptions.add(request.params.uri);
    return {};
  });

  server.setRequestHandler('resources/unsubscribe', async (request) => {
    subscriptions.delete(request.params.uri);
    return {};
  });
}
