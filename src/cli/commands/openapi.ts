/**
 * `airlock openapi SPEC …` (the openapi door alone over one API, HTTP or
 * stdio) and `airlock catalog build SPEC -o FILE` (the catalog codegen).
 * Door `openapi`, spec/openapi.md; issue #5.
 */
import { renameSync, writeFileSync } from 'node:fs';
import { parse, intOption, UsageError } from '../args.js';
import { createProcessLogger } from '../logger.js';
import {
  buildWorkspace,
  checkAnonymous,
  serveStdioUntilSignal,
  SERVING_OPTIONS,
} from '../workspace/command-workspace.js';
import { serveHttpUntilSignal } from '../server/http-serve.js';
import {
  catalogJson,
  compileSpec,
  DocumentError,
  DEFAULT_PREFIX,
  loadCatalog,
} from '../../doors/openapi/index.js';

export const OPENAPI_HELP = `Usage: airlock openapi SPEC [options]

Serves one REST API through three MCP tools (<prefix>_resources,
<prefix>_describe, <prefix>_call). SPEC is a path or URL to an OpenAPI
3.0/3.1 or Swagger 2.0 document (YAML or JSON), or a compiled catalog.
By default MCP is served over HTTP at /mcp; --stdio serves it on stdin/stdout.

Options:
  --base-url URL        the API's base URL (default: the document's first absolute server);
                        only its origin is ever contacted
  --prefix P            tool-name prefix (default plane)
  --header 'Name: v'    extra request header (repeatable); \${VAR} in the value is read
                        from the environment, so secrets stay out of the command line
  --default name=value  argument default (repeatable), e.g. --default slug=acme
  --probe PATH          version probe: when GET PATH answers 404, <prefix>_resources and
                        <prefix>_call refuse and point to --typed-tools
  --typed-tools a,b     the typed tools the probe message names
  --allow-external-refs follow $refs into other files or URLs
  --stdio               serve MCP over stdio instead of HTTP
  --port N, --host H, --token T, --allow-anonymous, --data DIR
                        as for airlock serve (HTTP mode)
  -h, --help            this help

Credentials come from environment variables named after the prefix and the
document's security schemes: <PREFIX>_<SCHEME> (upper snake case), or
<PREFIX>_API_KEY (API keys), <PREFIX>_TOKEN (bearer/OAuth), <PREFIX>_USERNAME
and <PREFIX>_PASSWORD (basic). <PREFIX>_WORKSPACE_SLUG is the default slug.
A secret shorter than 4 characters is refused (exit 2): it could not be told
apart from ordinary text, so it could not be kept out of results.

Exit codes: 0 clean shutdown, 2 bad arguments or an unreadable document, 1 other errors.`;

export const CATALOG_HELP = `Usage: airlock catalog build SPEC -o catalog.json [--allow-external-refs]

Compiles an OpenAPI 3.0/3.1 or Swagger 2.0 document (path or URL, YAML or
JSON) into the catalog the openapi door reads. The output is deterministic:
the same document gives byte-identical JSON. '-o -' writes to stdout.`;

const PREFIX = /^[a-zA-Z][a-zA-Z0-9_]*$/;

function headerOption(values: string[] | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const v of values ?? []) {
    const at = v.indexOf(':');
    const name = at > 0 ? v.slice(0, at).trim() : '';
    if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name))
      throw new UsageError(`--header must look like 'Name: value', got '${v}'`);
    out[name] = v.slice(at + 1).trim();
  }
  return out;
}

function defaultOption(values: string[] | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const v of values ?? []) {
    const at = v.indexOf('=');
    if (at <= 0) throw new UsageError(`--default must look like name=value, got '${v}'`);
    out[v.slice(0, at).trim()] = v.slice(at + 1);
  }
  return out;
}

function baseUrlOption(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new UsageError(`--base-url must be an http(s) URL, got '${value}'`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new UsageError(`--base-url must be an http(s) URL, got '${value}'`);
  return value;
}

/** An unreadable document is a bad argument: one line naming the file and the JSON pointer. */
async function checked<T>(work: Promise<T>): Promise<T> {
  try {
    return await work;
  } catch (error) {
    if (error instanceof DocumentError) throw new UsageError(error.message);
    throw error;
  }
}

export async function catalogCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parse({
    args: argv,
    allowPositionals: true,
    options: {
      output: { type: 'string', short: 'o' },
      'allow-external-refs': { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) {
    process.stdout.write(CATALOG_HELP + '\n');
    return 0;
  }
  const [action, spec, ...extra] = positionals;
  if (action !== 'build')
    throw new UsageError(
      `unknown catalog action '${action ?? ''}'; use: airlock catalog build SPEC -o FILE`,
    );
  if (!spec)
    throw new UsageError('catalog build needs SPEC (a path or URL to an OpenAPI document)');
  if (extra.length > 0) throw new UsageError(`unexpected argument '${extra[0]}'`);
  if (!values.output) throw new UsageError('catalog build needs -o FILE (or -o - for stdout)');
  const catalog = await checked(
    compileSpec(spec, { allowExternalRefs: values['allow-external-refs'] === true }),
  );
  const text = catalogJson(catalog);
  if (values.output === '-') {
    process.stdout.write(text);
    return 0;
  }
  const temp = `${values.output}.${process.pid}.tmp`;
  try {
    writeFileSync(temp, text);
    renameSync(temp, values.output);
  } catch (error) {
    throw new UsageError(
      `-o: cannot write '${values.output}' (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`,
    );
  }
  const methods = catalog.resources.reduce((n, r) => n + r.methods.length, 0);
  process.stderr.write(
    `airlock: wrote ${values.output}: ${catalog.resources.length} resources, ${methods} methods (${catalog.source.title} ${catalog.source.version})\n`,
  );
  return 0;
}

export async function openapiCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parse({
    args: argv,
    allowPositionals: true,
    options: {
      'base-url': { type: 'string' },
      prefix: { type: 'string' },
      header: { type: 'string', multiple: true },
      default: { type: 'string', multiple: true },
      probe: { type: 'string' },
      'typed-tools': { type: 'string' },
      'allow-external-refs': { type: 'boolean' },
      stdio: { type: 'boolean' },
      ...SERVING_OPTIONS,
    },
  });
  if (values.help) {
    process.stdout.write(OPENAPI_HELP + '\n');
    return 0;
  }
  const [spec, ...extra] = positionals;
  if (!spec)
    throw new UsageError(
      "openapi needs SPEC (a path or URL to an OpenAPI document or catalog); run 'airlock openapi --help'",
    );
  if (extra.length > 0) throw new UsageError(`unexpected argument '${extra[0]}'`);
  const prefix = values.prefix ?? DEFAULT_PREFIX;
  if (!PREFIX.test(prefix))
    throw new UsageError(`--prefix must be a letter then letters, digits or _, got '${prefix}'`);
  const baseUrl = baseUrlOption(values['base-url']);
  const headers = headerOption(values.header);
  const defaults = defaultOption(values.default);
  const port = intOption('port', values.port, 7300, 0, 65535);
  const host = values.host ?? '127.0.0.1';
  const token = values.token ?? process.env.AIRLOCK_TOKEN;
  const allowAnonymous = values['allow-anonymous'] === true;
  if (!values.stdio) checkAnonymous(host, allowAnonymous);
  if (values['typed-tools'] !== undefined && values.probe === undefined)
    throw new UsageError('--typed-tools needs --probe PATH');
  const allowExternalRefs = values['allow-external-refs'] === true;
  // Read the document now, so a bad one is exit 2 with its file and pointer; the door reuses it.
  await checked(loadCatalog(spec, { allowExternalRefs }));

  const logger = createProcessLogger();
  const workspace = await buildWorkspace({
    data: values.data ?? './.airlock',
    doors: ['openapi'],
    logger,
    openapi: [{ spec, baseUrl, prefix, headers, defaults }],
    config: {
      openapiOptions: {
        [prefix]: {
          allowExternalRefs,
          ...(values.probe
            ? {
                probe: {
                  path: values.probe,
                  typedTools: (values['typed-tools'] ?? '')
                    .split(',')
                    .map((s) => s.trim())
                    .filter(Boolean),
                },
              }
            : {}),
        },
      },
    },
    owner: values.stdio === true,
  });

  if (values.stdio) return serveStdioUntilSignal(workspace, logger);

  return serveHttpUntilSignal({
    workspace,
    logger,
    host,
    port,
    agentToken: token,
    allowAnonymous,
    stdioArgs: ['openapi', spec, '--stdio', '--prefix', prefix],
    title: `Airlock is serving ${spec} as ${prefix}_resources, ${prefix}_describe, ${prefix}_call`,
    clientName: prefix,
    links: [
      ['REST API', '/api/v1'],
      ['Health', '/healthz'],
    ],
  });
}
