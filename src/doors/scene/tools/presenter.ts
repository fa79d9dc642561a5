/**
 * How scene outcomes look on MCP: results as `structuredContent` plus the
 * same JSON as text; `export` adds a resource link to the file; `noProject`
 * becomes the reference's JSON-RPC error −32600 `invalid request: no project
 * open` (spec/scene.md "MCP tools"), every other failure a tool error with
 * `{code, message, ...data}`.
 */
import type { Presenter, ToolResult } from '../../../transport/surface.js';
import { NO_PROJECT_MESSAGE } from '../session.js';

export const INVALID_REQUEST = -32600;

export function scenePresenter(exportTool: string): Presenter {
  return {
    success(tool, value) {
      const result: ToolResult = {
        content: [{ type: 'text', text: JSON.stringify(value ?? null) }],
      };
      if (value !== null && typeof value === 'object' && !Array.isArray(value))
        result.structuredContent = value as Record<string, unknown>;
      if (tool.name === exportTool) {
        const v = value as { uri: string; name: string; mimeType: string };
        result.content.push({
          type: 'resource_link',
          uri: v.uri,
          name: v.name,
          mimeType: v.mimeType,
        });
      }
      return result;
    },
    failure(_tool, f) {
      if (f.code === 'noProject')
        return { protocolError: { code: INVALID_REQUEST, message: NO_PROJECT_MESSAGE } };
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
}
