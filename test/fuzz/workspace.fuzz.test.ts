/**
 * Fuzzing the workspace's own REST routes (issue #13 item 11): approvals,
 * grants, audit, jobs, agents, the owner's policy and the browser session,
 * over real HTTP with the notes door mounted so there are approvals, grants
 * and ids to aim at. Every error answer is `{status, code, message}`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/kernel/logger.js';
import { kernelRoutes } from '../../src/transport/rest/rest-kernel.js';
import { sessionRoutes } from '../../src/transport/rest/rest-session.js';
import { createHttpApp, type HttpApp } from '../../src/transport/http/http-app.js';
import type { RestRoute } from '../../src/transport/surface.js';
import { agentHeaders, ownerHeaders } from '../helpers/principals.js';
import { notesHarness, type Harness } from '../doors/notes/harness.js';
import { fuzzDataDir } from './tool-fuzz.js';
import { fuzzRoute, REST_RUNS, type RestFuzzTarget } from './rest-fuzz.js';

let h: Harness;
let app: HttpApp;
let rest: RestFuzzTarget;
let routes: RestRoute[];

beforeAll(async () => {
  h = await notesHarness({ dir: fuzzDataDir() });
  const projectID = await h.project('Fuzz');
  await h.grant('read', projectID);
  // One approval left pending, for the approve and deny routes to find.
  await h.env('rooqi_request_write_access', {});
  const [pending] = await h.tk.kernel.consent.pending();
  const [grant] = await h.tk.kernel.consent.grants();
  routes = [...kernelRoutes(h.tk.kernel), ...sessionRoutes(h.tk.kernel.principals)];

  app = createHttpApp({ kernel: h.tk.kernel, logger: silentLogger });
  const { port } = await app.listen(0, '127.0.0.1');
  const owner = await ownerHeaders(h.tk.kernel);
  rest = {
    base: `http://127.0.0.1:${port}`,
    callers: [
      owner,
      await agentHeaders(h.tk.kernel, 'fuzz'),
      {},
      { authorization: 'Bearer ok_forged' },
    ],
    words: [
      pending?.id ?? 'none',
      grant?.id ?? 'none',
      projectID,
      'notes',
      'rooqi_status',
      'allow',
      'ask',
      'deny',
      'read',
      'write',
      'destructive',
      'readOnly',
      'rules',
      'decision',
      'door',
      'tool',
      'agent',
      'target',
      'rate',
      '10/minute',
      'position',
      'token',
      'name',
      'resource',
      owner.authorization!.slice('Bearer '.length),
    ],
    maxBodyBytes: 4 * 1024 * 1024,
  };
}, 60_000);

afterAll(async () => {
  await app?.close();
  await h?.dispose();
});

describe('workspace REST routes under garbage', () => {
  it(`every route: ${REST_RUNS} garbage requests each answer {status, code, message} and the server keeps serving`, async () => {
    expect(routes.length).toBeGreaterThan(15);
    for (const route of routes) await fuzzRoute(rest, route);
  }, 300_000);
});
