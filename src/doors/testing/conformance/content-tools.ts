/**
 * Fixture tools with plain results: every content type, a failing tool,
 * progress, log notifications and a mid-call stream close. Names and payloads
 * are the ones `@modelcontextprotocol/conformance` calls (tools-call-*,
 * server-stateless, server-sse-polling).
 */
import { z } from 'zod';
import type { CallToolResult } from '@modelcontextprotocol/server';
import { defineTool, type AnyToolDef } from '../../../kernel/index.js';
import { currentRequest } from './request-scope.js';
import { PNG_BASE64, sleep, WAV_BASE64 } from './media.js';

const noArgs = z.object({}).strict();
const readOnly = { effect: 'read', annotations: { openWorldHint: false } } as const;
const text = (value: string): CallToolResult => ({ content: [{ type: 'text', text: value }] });

export const contentTools: AnyToolDef[] = [
  // http-custom-header-server-validation (SEP-2243): an argument mirrored into
  // Mcp-Param-Region, which the transport checks against the body.
  defineTool({
    name: 'test_custom_header',
    description: 'Echoes its region; clients mirror it into the Mcp-Param-Region header.',
    input: z.object({ region: z.string().meta({ 'x-mcp-header': 'Region' }) }).strict(),
    ...readOnly,
    handler: async ({ region }) => text(`region: ${region}`),
  }),
  defineTool({
    name: 'test_simple_text',
    description: 'Returns one text block.',
    input: noArgs,
    ...readOnly,
    handler: async () => text('This is a simple text response for testing.'),
  }),
  defineTool({
    name: 'test_image_content',
    description: 'Returns one image block (a 1x1 PNG).',
    input: noArgs,
    ...readOnly,
    handler: async (): Promise<CallToolResult> => ({
      content: [{ type: 'image', data: PNG_BASE64, mimeType: 'image/png' }],
    }),
  }),
  defineTool({
    name: 'test_audio_content',
    description: 'Returns one audio block (a tiny WAV).',
    input: noArgs,
    ...readOnly,
    handler: async (): Promise<CallToolResult> => ({
      content: [{ type: 'audio', data: WAV_BASE64, mimeType: 'audio/wav' }],
    }),
  }),
  defineTool({
    name: 'test_embedded_resource',
    description: 'Returns one embedded text resource.',
    input: noArgs,
    ...readOnly,
    handler: async (): Promise<CallToolResult> => ({
      content: [
        {
          type: 'resource',
          resource: {
            uri: 'test://embedded-resource',
            mimeType: 'text/plain',
            text: 'This is an embedded resource content.',
          },
        },
      ],
    }),
  }),
  defineTool({
    name: 'test_multiple_content_types',
    description: 'Returns text, image and embedded resource blocks in one result.',
    input: noArgs,
    ...readOnly,
    handler: async (): Promise<CallToolResult> => ({
      content: [
        { type: 'text', text: 'Multiple content types test:' },
        { type: 'image', data: PNG_BASE64, mimeType: 'image/png' },
        {
          type: 'resource',
          resource: {
            uri: 'test://mixed-content-resource',
            mimeType: 'application/json',
            text: JSON.stringify({ test: 'data', value: 123 }),
          },
        },
      ],
    }),
  }),
  defineTool({
    name: 'test_error_handling',
    description: 'Always throws, so the kernel answers internal with isError and a log id.',
    input: noArgs,
    ...readOnly,
    handler: async (): Promise<CallToolResult> => {
      // A throw, not a Failure: this is the path that must never leak a stack to the client.
      throw new Error('This tool intentionally returns an error for testing');
    },
  }),
  defineTool({
    name: 'test_tool_with_progress',
    description: 'Reports progress 0, 50 and 100 of 100 (when the call carried a progressToken).',
    input: noArgs,
    ...readOnly,
    handler: async (_input, ctx) => {
      for (const step of [0, 50, 100]) {
        await ctx.progress(step, 100, `Completed step ${step} of 100`);
        if (step < 100) await sleep(50, ctx.signal);
      }
      return text('Progress reported: 0, 50, 100 of 100.');
    },
  }),
  defineTool({
    name: 'test_tool_with_logging',
    description: 'Sends three info log notifications while it runs.',
    input: noArgs,
    ...readOnly,
    handler: async (_input, ctx) => {
      const { log } = currentRequest();
      await log('info', 'Tool execution started');
      await sleep(50, ctx.signal);
      await log('info', 'Tool processing data');
      await sleep(50, ctx.signal);
      await log('info', 'Tool execution completed');
      return text('Tool with logging executed successfully');
    },
  }),
  defineTool({
    name: 'test_logging_tool',
    description:
      'Logs one info line; on 2026-07-28 it reaches the client only when the request set _meta logLevel.',
    input: noArgs,
    ...readOnly,
    handler: async () => {
      await currentRequest().log('info', 'Per-request log line');
      return text('Logging tool complete');
    },
  }),
  defineTool({
    name: 'test_reconnection',
    description:
      'Closes its own SSE stream mid-call so the client resumes with Last-Event-ID (SEP-1699), where the transport keeps an event store; then answers.',
    input: noArgs,
    ...readOnly,
    handler: async (_input, ctx) => {
      // Airlock's 2025-era sessions keep no event store yet, so the SDK offers no closeStream:
      // the result then simply arrives on the open stream (server-sse-polling reports INFO).
      currentRequest().closeStream?.();
      await sleep(100, ctx.signal);
      return text('Reconnection test completed: the result was delivered after the stream closed.');
    },
  }),
];
