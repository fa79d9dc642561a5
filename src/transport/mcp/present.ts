/**
 * Shows a kernel call outcome as an MCP tool result, through the door's
 * presenter (RooQi envelope, WU error JSON, Koharu's protocol error) or the
 * generic one. The one place an outcome becomes MCP content.
 */
import type { CallOutcome } from '../../kernel/calls/pipeline.js';
import type { AnyToolDef } from '../../kernel/tool.js';
import type { GenericPresenter, Presented, Presenter, ToolResult } from '../surface.js';

/** The generic wire format: JSON text, `structuredContent` when an output schema exists. */
export const defaultPresenter: GenericPresenter = {
  success(tool, value) {
    const text = JSON.stringify(value ?? null);
    const result: ToolResult = { content: [{ type: 'text', text }] };
    if (tool.output && value !== null && typeof value === 'object' && !Array.isArray(value)) {
      result.structuredContent = value as Record<string, unknown>;
    }
    return result;
  },
  failure(_tool, f) {
    return {
      content: [
        {
          type: 'text',
          text: JSON.stringify({ code: f.code, message: f.message, ...(f.data ?? {}) }),
        },
      ],
      isError: true,
    };
  },
};

/** A stand-in for a tool name the door does not know, so its presenter can still answer. */
const unknownTool = (name: string): AnyToolDef =>
  ({ name, description: '', input: undefined, handler: async () => null }) as never;

export function presentOutcome(
  presenter: Presenter | undefined,
  tool: AnyToolDef | string,
  outcome: CallOutcome,
): Presented {
  const p = presenter ?? defaultPresenter;
  const def = typeof tool === 'string' ? unknownTool(tool) : tool;
  return outcome.ok
    ? p.success(def, outcome.value, defaultPresenter)
    : p.failure(def, outcome, defaultPresenter);
}
