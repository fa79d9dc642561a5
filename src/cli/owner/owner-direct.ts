/**
 * The owner's REST routes answered in process, on the store itself
 * (authority.md §3): when no server runs on the data folder — a stdio or
 * standalone door keeps its approvals there — `airlock approvals` and
 * `airlock policy` open the store and run the very same route handlers, so
 * validation, decisions and the owner's audit entries are identical. Only
 * the holder of the folder's owner token may do so.
 */
import { createKernel } from '../../kernel/kernel.js';
import { createEventBus } from '../../kernel/events/events.js';
import { isFailure, AirlockError } from '../../kernel/errors.js';
import { silentLogger } from '../../kernel/logger.js';
import { openStore } from '../../store/open.js';
import { kernelRoutes } from '../../transport/rest/rest-kernel.js';
import { createRouter } from '../../transport/http/router.js';
import { failureResponse } from '../../transport/http/http-errors.js';
import { checkPresence } from '../../transport/rest/presence-gate.js';
import type { OwnerClient } from './owner-client.js';
import type { PolicyConfig } from '../../kernel/authority/policy.js';

export async function directOwnerClient(
  data: string,
  ownerToken: string | undefined,
  store?: string,
  policy?: PolicyConfig,
): Promise<OwnerClient & { close(): Promise<void> }> {
  const opened = await openStore({ data, ...(store ? { store } : {}) });
  const events = await createEventBus();
  const kernel = createKernel({
    store: opened.store,
    blobs: opened.blobs,
    events,
    logger: silentLogger,
    // The config file's policy rules (they come first), so positions and tests match the server's.
    policy,
  });
  const close = async () => {
    await events.close();
    await opened.store.close();
  };
  if (!ownerToken || !(await kernel.principals.isOwnerToken(ownerToken))) {
    await close();
    throw new Error(
      `no server answers and the owner token does not match the store in ${data}; pass --data with the folder's owner.token, or --url of the running server`,
    );
  }
  const router = createRouter();
  for (const route of kernelRoutes(kernel)) router.add(route);
  return {
    close,
    async call(method, path, body) {
      const url = new URL(path, 'http://direct/');
      const match = router.match(method, url.pathname);
      if (!match.route)
        return { status: 404, body: { code: 'notFound', message: `No route ${method} ${path}` } };
      try {
        const request = {
          params: match.params,
          query: url.searchParams,
          body,
          headers: {},
          caller: { kind: 'owner' as const, via: 'bearer' as const },
        };
        // In process or not, a decision needs the owner's presence when the store says so (issue 25).
        const absent = await checkPresence(
          kernel.presence,
          match.route,
          method,
          url.pathname,
          request,
        );
        const out = absent ?? (await match.route.handler(request));
        const response = isFailure(out) ? failureResponse(out) : out;
        return { status: response.status, body: (response.body ?? {}) as Record<string, unknown> };
      } catch (error) {
        if (error instanceof AirlockError) {
          const response = failureResponse(error.toFailure());
          return { status: response.status, body: response.body as Record<string, unknown> };
        }
        throw error;
      }
    },
  };
}
