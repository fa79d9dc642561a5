/**
 * SEP-2243 custom headers (protocol 2026-07-28, streamable HTTP): a tool
 * whose input schema marks an argument with `x-mcp-header: "Name"` gets that
 * argument mirrored by the client into an `Mcp-Param-Name` header, so
 * gateways can route on it. The server MUST reject (HTTP 400, JSON-RPC
 * -32020 HeaderMismatch) a call whose header is missing, undecodable or
 * different from the body. The SDK checks this only for `McpServer`
 * products; Airlock serves a low-level Server, so the check lives here, for
 * every tool that declares a header (an upstream's passed-through schema too).
 *
 * Values: `=?base64?…?=` wraps canonical Base64 of UTF-8 (bad padding or
 * alphabet is rejected); anything else is the literal value. Numbers
 * compare numerically, booleans as `true`/`false`.
 */

export const HEADER_MISMATCH = -32020;

interface Declaration {
  argument: string;
  header: string;
  type: unknown;
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** Declarations per served schema object: a tool's schema is built once, checked on every call. */
const declared = new WeakMap<object, readonly Declaration[]>();

/** The top-level arguments a tool's input schema mirrors into headers. */
export function headerDeclarations(inputSchema: unknown): readonly Declaration[] {
  if (!isObject(inputSchema) || !isObject(inputSchema.properties)) return [];
  const known = declared.get(inputSchema);
  if (known) return known;
  const out: Declaration[] = [];
  for (const [argument, schema] of Object.entries(inputSchema.properties)) {
    if (isObject(schema) && typeof schema['x-mcp-header'] === 'string')
      out.push({ argument, header: schema['x-mcp-header'], type: schema.type });
  }
  declared.set(inputSchema, out);
  return out;
}

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** A header value as the client meant it, or undefined when its Base64 is broken. */
export function decodeParamValue(raw: string): string | undefined {
  const value = raw.trim();
  if (!(value.startsWith('=?base64?') && value.endsWith('?=') && value.length >= 11)) return value;
  const payload = value.slice('=?base64?'.length, -'?='.length);
  if (!BASE64.test(payload)) return undefined;
  const bytes = Buffer.from(payload, 'base64');
  const text = new TextDecoder('utf-8', { fatal: true });
  try {
    return text.decode(bytes);
  } catch {
    return undefined;
  }
}

const asText = (v: unknown): string | undefined =>
  typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean' ? String(v) : undefined;

/**
 * Why a `tools/call` must be refused, or null when its `Mcp-Param-*`
 * headers agree with its arguments. `header(name)` reads a request header
 * (case-insensitively), undefined when absent.
 */
export function paramHeaderMismatch(
  inputSchema: unknown,
  args: unknown,
  header: (name: string) => string | undefined,
): { message: string; data: { mismatch: { header: string; body: string } } } | null {
  const values = isObject(args) ? args : {};
  for (const decl of headerDeclarations(inputSchema)) {
    const body = values[decl.argument];
    const bodyText = asText(body);
    if (bodyText === undefined) continue;
    const name = `Mcp-Param-${decl.header}`;
    const raw = header(name);
    const refuse = (why: string) => ({
      message: `Bad Request: the request headers and body disagree: ${why}. Send ${name} with the value of '${decl.argument}' (=?base64?…?= for non-ASCII).`,
      data: { mismatch: { header: name, body: `${decl.argument}=${JSON.stringify(body)}` } },
    });
    if (raw === undefined)
      return refuse(`the body carries '${decl.argument}' but ${name} is absent`);
    const decoded = decodeParamValue(raw);
    if (decoded === undefined) return refuse(`${name} carries invalid Base64`);
    const same =
      typeof body === 'number' && (decl.type === 'number' || decl.type === 'integer')
        ? decoded.trim() !== '' && Number(decoded) === body
        : decoded === bodyText;
    if (!same) return refuse(`${name} is ${JSON.stringify(decoded)}, the body has ${bodyText}`);
  }
  return null;
}
