/**
 * `rooqi_status` and the three request-access tools (spec/notes.md "Tools").
 * Consent is the kernel's: a request files a pending approval the owner
 * answers by picking a project (web UI, `airlock approvals`, REST or MCP
 * elicitation). Read, write and PDF grants are separate and never widen.
 */
import { AIRLOCK_VERSION, defineTool, type Grant } from '../../kernel/index.js';
import { Empty } from './schemas.js';
import { EnvelopeSchema } from './envelope.js';
import type { NotesRuntime } from './runtime.js';

/** The notes door's own version and the version of its envelope protocol. */
export const NOTES_SERVER = {
  name: 'airlock-notes',
  version: AIRLOCK_VERSION,
  protocolVersion: 1,
};

export type Capability = 'read' | 'write' | 'pdfAnnotate';

const grantView = (g: Grant) => ({
  capability: g.capability,
  projectID: g.resource?.id ?? null,
  projectName: g.resource?.name ?? null,
  expiresAt: new Date(g.expiresAt).toISOString(),
});

export function accessTools(rt: NotesRuntime) {
  const p = rt.prefix;
  const status = defineTool({
    name: `${p}_status`,
    description: 'Server and protocol version, and the grants this connection holds.',
    input: Empty,
    output: EnvelopeSchema,
    effect: 'read',
    annotations: { idempotentHint: true, openWorldHint: false },
    handler: async (_input, ctx) => {
      const grants = (await rt.kernel().consent.grants(ctx.connection.id)).filter(
        (g) => g.door === rt.mount,
      );
      return { server: NOTES_SERVER, grants: grants.map(grantView) };
    },
  });

  const request = (capability: Capability, name: string, what: string) =>
    defineTool({
      name: `${p}_${name}`,
      description: `Ask the owner for ${what} (one they choose, 15 minutes); answers approvalRequired until they approve.`,
      input: Empty,
      output: EnvelopeSchema,
      effect: 'read',
      annotations: { openWorldHint: false },
      handler: async (_input, ctx) => {
        const client = ctx.connection.client?.name ?? 'An agent';
        const grant = await ctx.requestConsent({
          capability,
          summary: `${client} asks for ${what}`,
        });
        return 'ok' in grant ? grant : grantView(grant);
      },
    });

  return [
    status,
    request('read', 'request_read_access', 'read access to a project’s notes'),
    request('write', 'request_write_access', 'access to create and append notes in a project'),
    request(
      'pdfAnnotate',
      'request_pdf_annotation_access',
      'access to read selected PDF text and add annotations in a project',
    ),
  ];
}
