/**
 * The owner's side of connecting an OAuth client (authority.md §7): the
 * consent page reads the waiting request and decides it (an owner decision:
 * the presence gate applies), and the Agents screen lists which agents
 * OAuth clients act as.
 */
import { z } from 'zod';
import { validateInput } from '../../kernel/calls/validate.js';
import type { RestRoute } from '../surface.js';
import type { OAuthServer } from './server.js';

const DecideBody = z
  .object({
    decision: z.enum(['approve', 'deny']),
    /** The agent the client acts as: an active agent's name (reused) or a new one. */
    agent: z.string().max(64).optional(),
    /** Deny this agent every write and destructive call (owner rules placed first). */
    readOnly: z.boolean().optional(),
  })
  .strict();

export function oauthRoutes(oauth: OAuthServer): RestRoute[] {
  return [
    {
      method: 'GET',
      path: 'oauth/requests/{id}',
      summary:
        'A waiting OAuth connection: the client (name, hosts of its page, logo and redirect; how it identified itself), the resource and doors it asks for, agents it may act as, when the request expires',
      handler: async ({ params }) => {
        const shown = await oauth.consent(params.id!);
        return 'ok' in shown ? shown : { status: 200, body: shown };
      },
    },
    {
      method: 'POST',
      path: 'oauth/requests/{id}',
      summary:
        'Decide a waiting OAuth connection: {decision: "approve"|"deny", agent?, readOnly?}; answers {redirectTo}, where the browser goes on',
      decides: true,
      handler: async ({ params, body }) => {
        const parsed = validateInput(DecideBody, body ?? {});
        if (!parsed.ok) return parsed;
        const { decision, agent, readOnly } = parsed.value;
        const done = await oauth.decide(params.id!, {
          approve: decision === 'approve',
          ...(agent !== undefined ? { agent } : {}),
          ...(readOnly !== undefined ? { readOnly } : {}),
        });
        return 'ok' in done ? done : { status: 200, body: done };
      },
    },
    {
      method: 'GET',
      path: 'oauth/agents',
      summary:
        'Agents OAuth clients act as: agent name → {clientId, clientName, connectedAt, grants, tokens (access and refresh tokens still good)}',
      handler: async () => ({ status: 200, body: { agents: await oauth.agents() } }),
    },
  ];
}
