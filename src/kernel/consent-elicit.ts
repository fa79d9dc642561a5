/**
 * Consent through MCP elicitation (spec/kernel.md §5): when the client can
 * show a form, a fresh approval request is also offered there. Accepting with
 * "approve" grants it (for the resource chosen in the form, when the door has
 * resources to choose from); declining denies it; cancelling, or a client that
 * fails to answer, leaves it pending in the inbox.
 */
import { isFailure, type Failure } from './errors.js';
import type { Consent, ConsentRequest } from './consent.js';
import type { Grant, ResourceRef } from './records.js';

export interface ElicitResponse {
  action: 'accept' | 'decline' | 'cancel';
  content?: Record<string, unknown> | undefined;
}

/** Asks the client to show a form: message plus a flat JSON Schema object. */
export type Elicit = (
  message: string,
  requestedSchema: Record<string, unknown>,
) => Promise<ElicitResponse>;

export interface ElicitConsentOptions {
  consent: Consent;
  connection: string;
  door: string;
  request: ConsentRequest;
  elicit: Elicit;
  resources?: ((capability: string) => Promise<ResourceRef[]>) | undefined;
  clientName?: string | undefined;
}

export async function requestWithElicitation(o: ElicitConsentOptions): Promise<Grant | Failure> {
  const first = await o.consent.request(o.connection, o.door, o.request);
  if (!isFailure(first) || first.code !== 'approvalRequired') return first;
  const approvalId = String(first.data?.approvalID ?? '');
  const choices = (await o.resources?.(o.request.capability)) ?? [];
  if (o.resources && choices.length === 0) return first; // nothing to choose yet: the inbox explains
  const properties: Record<string, unknown> = {
    approve: {
      type: 'boolean',
      title: 'Approve',
      description: 'Allow this access for the granted lifetime',
    },
  };
  if (choices.length > 0) {
    properties.resource = { type: 'string', title: 'Which one', enum: choices.map((c) => c.name) };
  }
  let answer: ElicitResponse;
  try {
    answer = await o.elicit(
      `${o.clientName ?? 'An agent'} asks for ${o.request.capability} access to ${o.door}. ${o.request.summary ?? ''}`.trim(),
      {
        type: 'object',
        properties,
        required: choices.length > 0 ? ['approve', 'resource'] : ['approve'],
      },
    );
  } catch {
    return first; // the client could not show the form: the request stays in the inbox
  }
  if (answer.action === 'cancel') return first;
  if (answer.action === 'decline' || answer.content?.approve !== true) {
    await o.consent.deny(approvalId);
    return o.consent.request(o.connection, o.door, o.request);
  }
  const picked = choices.find((c) => c.name === answer.content?.resource) ?? null;
  if (choices.length > 0 && !picked) return first;
  await o.consent.approve(approvalId, picked);
  return o.consent.request(o.connection, o.door, o.request);
}
