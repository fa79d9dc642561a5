/**
 * How `wu_*` outcomes look on the wire (spec/page.md "Tools"): JSON in
 * `content[0].text` plus `structuredContent`; a screenshot adds the PNG as
 * image content after its metadata. Failures are `isError` with
 * `{code, message}`, where `code` is the WU code when the relay or page gave
 * one (e.g. WU_PERMISSION_DENIED), else the kernel's.
 */
import type { Presenter, ToolResult } from '../../transport/surface.js';
import { IMAGE_TOOLS } from './tools.js';

interface ImageResult {
  image: { data: string; mimeType: string };
  [key: string]: unknown;
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  v !== null && typeof v === 'object' && !Array.isArray(v);

export const pagePresenter: Presenter = {
  success(tool, value) {
    if (IMAGE_TOOLS.has(tool.name) && isObject(value) && isObject(value.image)) {
      const { image, ...metadata } = value as ImageResult;
      return {
        content: [
          { type: 'text', text: JSON.stringify(metadata) },
          { type: 'image', data: image.data, mimeType: image.mimeType },
        ],
        structuredContent: metadata,
      };
    }
    const result: ToolResult = { content: [{ type: 'text', text: JSON.stringify(value ?? null) }] };
    if (isObject(value)) result.structuredContent = value;
    return result;
  },
  failure(_tool, f) {
    const code = typeof f.data?.code === 'string' ? f.data.code : f.code;
    const body: Record<string, unknown> = { code, message: f.message };
    if (code !== f.code) body.kind = f.code;
    if (f.data?.logId) body.logId = f.data.logId;
    // What the agent needs to act on the owner's policy: the approval to wait for, the rule, when to retry.
    for (const key of ['approvalID', 'rule', 'reason', 'retryAfterMs'])
      if (f.data?.[key] !== undefined && f.data[key] !== null) body[key] = f.data[key];
    return { content: [{ type: 'text', text: JSON.stringify(body) }], isError: true };
  },
};
