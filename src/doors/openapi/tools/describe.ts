/**
 * `<prefix>_describe {resource, method}`: the full signature from the
 * catalog alone (works while the API is unreachable): parameters in call
 * order with the body fields, which are path ids, allowed values,
 * pagination, "destructive: needs confirm", and a complete example input
 * for `<prefix>_call`. Unknown names get a "did you mean" list.
 */
import { z } from 'zod';
import { defineTool, failure, type Failure } from '../../../kernel/index.js';
import { didYouMean, signature, type MethodEntry, type ResourceEntry } from '../catalog-index.js';
import type { Runtime } from '../runtime.js';
import { pretty, type Shown } from '../present.js';
import { DEFAULT_LIMIT, MAX_LIMIT } from '../http/iterate.js';

const ALLOWED_SHOWN = 60;

/** The resource and method, or a notFound naming the closest ones. */
export function lookup(
  rt: Runtime,
  resource: string,
  method: string,
): { resource: ResourceEntry; method: MethodEntry } | Failure {
  const r = rt.index.resource(resource);
  if (!r) {
    const near = didYouMean(
      resource,
      rt.index.resources.map((x) => x.path),
    );
    return failure(
      'notFound',
      `No resource '${resource}'.${near.length ? ` Did you mean: ${near.join(', ')}?` : ''} Call ${rt.tool('resources')} to find one.`,
      { didYouMean: near },
    );
  }
  const m = r.methods.get(method);
  if (!m) {
    const near = didYouMean(method, r.methods.keys());
    return failure(
      'notFound',
      `${resource} has no method '${method}'.${near.length ? ` Did you mean: ${near.join(', ')}?` : ''} Its methods: ${[...r.methods.keys()].join(', ')}.`,
      { didYouMean: near },
    );
  }
  return { resource: r, method: m };
}

/** A complete `<prefix>_call` input: the compiled example with configured defaults shown. */
export function exampleInput(
  rt: Runtime,
  resource: string,
  m: MethodEntry,
): Record<string, unknown> {
  const args: Record<string, unknown> = { ...m.example };
  for (const p of m.pathIds) {
    const d = rt.defaults[p.name] ?? rt.defaults[p.original];
    if (d !== undefined) args[p.name] = d;
  }
  return {
    resource,
    method: m.name,
    args,
    ...(m.iterates ? { limit: DEFAULT_LIMIT } : {}),
    ...(m.kind === 'destructive' ? { confirm: true } : {}),
  };
}

function allowedText(values: readonly unknown[]): string {
  const shown = values
    .slice(0, ALLOWED_SHOWN)
    .map((v) => (typeof v === 'string' ? v : JSON.stringify(v)));
  return `${shown.join(', ')}${values.length > ALLOWED_SHOWN ? ` … (${values.length - ALLOWED_SHOWN} more)` : ''}`;
}

export function describeText(rt: Runtime, resource: string, m: MethodEntry): string {
  const lines = [
    `${resource}.${signature(m)}  [${m.kind}]`,
    `${m.http} ${m.path}`,
    m.summary,
    '',
    'Parameters, in call order:',
  ];
  for (const p of m.pathIds) {
    const d = rt.defaults[p.name] ?? rt.defaults[p.original];
    const notes = [
      `path id`,
      ...(p.original !== p.name ? [`spec name ${p.original}, also accepted`] : []),
      ...(d !== undefined ? [`default: ${d}`] : []),
    ];
    lines.push(
      `  ${p.name}: ${p.type} — ${notes.join('; ')}${p.description ? `. ${p.description}` : ''}`,
    );
  }
  if (m.body) {
    lines.push(
      `  data${m.body.required ? '' : '?'}: ${m.body.type} — request body (${m.body.contentType})`,
    );
    for (const f of m.body.fields)
      lines.push(
        `    ${f.name}${f.required ? '' : '?'}: ${f.type}${f.description ? ` — ${f.description}` : ''}`,
      );
    if (m.body.moreFields) lines.push(`    … and ${m.body.moreFields} more fields`);
  }
  if (m.params.length > 0) {
    lines.push(
      `  params${m.params.some((p) => p.required) ? '' : '?'}: object — ${m.params.some((p) => p.in !== 'query') ? 'query and header parameters' : 'query parameters'}`,
    );
    for (const p of m.params) {
      lines.push(
        `    ${p.name}${p.required ? '' : '?'}: ${p.type}${p.in !== 'query' ? ` (${p.in})` : ''}${p.description ? ` — ${p.description}` : ''}`,
      );
      if (p.allowed) lines.push(`      allowed: ${allowedText(p.allowed)}`);
    }
  }
  if (m.iterates)
    lines.push(
      `  limit?: integer — items to collect across pages (default ${DEFAULT_LIMIT}, at most ${MAX_LIMIT})`,
    );
  lines.push(
    '',
    `Returns: ${m.iterates ? `{items: [...], count, truncated} collected from ${m.returns}` : m.returns}`,
  );
  if (m.pagination) {
    const p = m.pagination;
    const how = [
      p.param ? `page parameter ${p.param}` : undefined,
      p.sizeParam ? `page size ${p.sizeParam}` : undefined,
      p.next ? `next cursor at ${p.next}` : undefined,
      p.more ? `more pages flag ${p.more}` : undefined,
      `items at ${p.items || 'the top level'}`,
    ].filter(Boolean);
    lines.push(
      `Pagination: ${p.style} (${how.join(', ')})${m.iterates ? '' : `; method 'iterate' collects across pages`}`,
    );
  }
  if (m.kind === 'destructive')
    lines.push('destructive: needs confirm — ask the user first, then pass confirm: true');
  lines.push('', `Example ${rt.tool('call')} input:`, pretty(exampleInput(rt, resource, m)));
  return lines.join('\n');
}

export function describeTool(rt: Runtime) {
  return defineTool({
    name: rt.tool('describe'),
    description: `The full signature of one method of ${rt.index.catalog.source.title || 'the API'}: parameters in call order (path ids, then data with its body fields, then params), allowed values, pagination, whether it is destructive, and a complete example input for ${rt.tool('call')}. Works from the catalog alone.`,
    input: z
      .object({ resource: z.string().min(1).max(300), method: z.string().min(1).max(200) })
      .strict(),
    output: z.object({
      resource: z.string(),
      method: z.string(),
      signature: z.string(),
      kind: z.enum(['read', 'write', 'destructive']),
      http: z.string(),
      path: z.string(),
      summary: z.string(),
      pathIds: z.array(
        z.object({ name: z.string(), original: z.string(), type: z.string() }).passthrough(),
      ),
      body: z.unknown().optional(),
      params: z.array(
        z.object({ name: z.string(), type: z.string(), required: z.boolean() }).passthrough(),
      ),
      returns: z.string(),
      pagination: z.unknown().optional(),
      destructive: z.boolean(),
      example: z.record(z.string(), z.unknown()),
    }),
    effect: 'read',
    annotations: { openWorldHint: false },
    handler: async ({ resource, method }) => {
      const found = lookup(rt, resource, method);
      if ('ok' in found) return found;
      const m = found.method;
      const strip = <T extends { schema?: unknown }>(x: T) =>
        Object.fromEntries(Object.entries(x).filter(([k]) => k !== 'schema'));
      return {
        text: describeText(rt, resource, m),
        structured: {
          resource,
          method: m.name,
          signature: `${resource}.${signature(m)}`,
          kind: m.kind,
          http: m.http,
          path: m.path,
          summary: m.summary,
          pathIds: m.pathIds.map(strip),
          ...(m.body ? { body: strip(m.body) } : {}),
          params: m.params.map(strip),
          returns: m.returns,
          ...(m.pagination ? { pagination: m.pagination } : {}),
          destructive: m.kind === 'destructive',
          example: exampleInput(rt, resource, m),
        },
      } satisfies Shown;
    },
  });
}
