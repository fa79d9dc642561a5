/**
 * Test-only door `conformance` (spec/kernel.md §12): the fixture tools,
 * resources and prompts `@modelcontextprotocol/conformance` expects, served on
 * the same transport stack as the real doors, so the suite checks Airlock's
 * own HTTP and stdio layers. Enabled only with AIRLOCK_ENABLE_TEST_DOORS=1.
 *
 * - Tools are declared with `defineTool` and pass the whole kernel pipeline;
 *   their handlers return MCP results as the wire carries them, including
 *   `input_required` rounds (SEP-2322), which this door's presenter passes
 *   through untouched.
 * - Resources, prompts and completion are added with `extendServer`, and
 *   declared in `capabilities`.
 * - The tasks scenarios' tools run as MCP tasks (`tasks`, SEP-2663).
 * - `withMcpRequest` keeps the request's multi-round-trip input and log
 *   channel in reach of the handlers (conformance/request-scope.ts).
 *
 * `scripts/conformance.mjs` runs the official suites against it.
 */
import type { Server } from '@modelcontextprotocol/server';
import type { Presenter, ServedDoor, ToolResult } from '../../transport/surface.js';
import { contentTools } from './conformance/content-tools.js';
import { elicitationTools } from './conformance/elicitation-tools.js';
import { createInputRequiredTools } from './conformance/input-required-tools.js';
import { createRequestStateSeal } from './conformance/request-state.js';
import { jsonSchemaTool } from './conformance/schema-tool.js';
import { runWithRequest } from './conformance/request-scope.js';
import { registerResources } from './conformance/resources.js';
import { registerPrompts } from './conformance/prompts.js';
import { conformanceTaskSupport, taskTools } from './conformance/task-tools.js';

/**
 * Results go out as the handlers built them. A failure carrying
 * `data.jsonRpc` (a refused requestState) becomes that JSON-RPC error;
 * any other failure is the kernel's usual `isError` result.
 */
const wirePresenter: Presenter = {
  success: (_tool, value) => value as ToolResult,
  failure(tool, f, generic) {
    const rpc = f.data?.['jsonRpc'] as { code: number; data?: unknown } | undefined;
    if (rpc)
      return {
        protocolError: {
          code: rpc.code,
          message: f.message,
          ...(rpc.data !== undefined ? { data: rpc.data } : {}),
        },
      };
    return generic.failure(tool, f);
  },
};

export function createConformanceDoor(): ServedDoor {
  const seal = createRequestStateSeal();
  return {
    name: 'conformance',
    tools: [
      ...contentTools,
      jsonSchemaTool(),
      ...elicitationTools,
      ...createInputRequiredTools(seal),
      ...taskTools,
    ],
    mcp: {
      presenter: wirePresenter,
      tasks: conformanceTaskSupport,
      capabilities: {
        resources: { subscribe: true },
        prompts: {},
        completions: {},
        logging: {},
      },
      extendServer(server) {
        registerResources(server as Server);
        registerPrompts(server as Server);
      },
      withMcpRequest: (request, call) => runWithRequest(request, call),
    },
  };
}
