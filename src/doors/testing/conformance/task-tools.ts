/**
 * Fixture tools of the tasks scenarios (SEP-2663, conformance `tasks-*`):
 * a sync tool, tools the server runs as tasks (a slow computation that
 * cancels cleanly, a tool error, a protocol error, one and two pending
 * elicitations) and a tool that gathers input before its task starts
 * (SEP-2322 then SEP-2663). `conformanceTaskSupport` is how the door offers
 * them as tasks (McpSurface.tasks).
 */
import { z } from 'zod';
import { inputRequired, inputResponse } from '@modelcontextprotocol/server';
import type { CallToolResult } from '@modelcontextprotocol/server';
import { defineTool, failure, type AnyToolDef } from '../../../kernel/index.js';
import type { McpRequestScope, McpTaskSupport } from '../../../transport/surface.js';
import { currentRequest } from './request-scope.js';
import { sleep } from './media.js';

const readOnly = { effect: 'read', annotations: { openWorldHint: false } } as const;
const text = (value: string): CallToolResult => ({ content: [{ type: 'text', text: value }] });

const askName = () =>
  inputRequired.elicit({
    message: 'What is your name?',
    requestedSchema: {
      type: 'object',
      properties: { name: { type: 'string' } },
      required: ['name'],
    },
  });
const askConfirm = (message: string) =>
  inputRequired.elicit({
    message,
    requestedSchema: {
      type: 'object',
      properties: { confirm: { type: 'boolean' } },
      required: ['confirm'],
    },
  });

/** Accepted elicitation content under `key` in these responses, or undefined. */
function accepted(responses: McpRequestScope['inputResponses'], key: string) {
  const answer = inputResponse(responses, key);
  return answer.kind === 'elicit' && answer.action === 'accept'
    ? (answer.content ?? {})
    : undefined;
}

export const taskTools: AnyToolDef[] = [
  defineTool({
    name: 'greet',
    description: 'Greets the caller at once (never a task).',
    input: z.object({ name: z.string().max(200) }).strict(),
    ...readOnly,
    handler: async ({ name }) => text(`Hello, ${name}!`),
  }),
  defineTool({
    name: 'slow_compute',
    description:
      'Sleeps `seconds`, reporting progress each second, then answers; stops at once when cancelled.',
    input: z
      .object({ seconds: z.number().min(0).max(600), label: z.string().max(200).optional() })
      .strict(),
    ...readOnly,
    handler: async ({ seconds, label }, ctx) => {
      for (let done = 0; done < seconds && !ctx.signal.aborted; done++) {
        await sleep(Math.min(1, seconds - done) * 1000, ctx.signal);
        await ctx.progress(
          Math.min(done + 1, seconds),
          seconds,
          `computed ${done + 1}s of ${seconds}s`,
        );
      }
      if (ctx.signal.aborted) return failure('cancelled', 'slow_compute was cancelled.');
      return text(`Computed ${label ?? 'result'} after ${seconds}s.`);
    },
  }),
  defineTool({
    name: 'failing_job',
    description: 'Reports a tool execution error after about a second.',
    input: z.object({}).strict(),
    ...readOnly,
    handler: async (_input, ctx) => {
      await sleep(1000, ctx.signal);
      return {
        content: [{ type: 'text', text: 'failing_job failed, as it always does.' }],
        isError: true,
      };
    },
  }),
  defineTool({
    name: 'protocol_error_job',
    description: 'Ends in a JSON-RPC internal error (a protocol-level failure).',
    input: z.object({}).strict(),
    ...readOnly,
    handler: async (_input, ctx) => {
      await sleep(200, ctx.signal);
      return failure(
        'internal',
        'protocol_error_job failed at the protocol level, as it always does.',
        {
          jsonRpc: { code: -32603 },
        },
      );
    },
  }),
  defineTool({
    name: 'confirm_delete',
    description: 'Asks the client to confirm (one elicitation), then "deletes" the file.',
    input: z.object({ filename: z.string().max(500) }).strict(),
    ...readOnly,
    handler: async ({ filename }) => {
      const answer = inputResponse(currentRequest().inputResponses, 'confirm');
      if (answer.kind !== 'elicit')
        return inputRequired({ inputRequests: { confirm: askConfirm(`Delete ${filename}?`) } });
      const yes = answer.action === 'accept' && answer.content?.['confirm'] === true;
      return text(yes ? `Deleted ${filename}.` : `Kept ${filename}.`);
    },
  }),
  defineTool({
    name: 'multi_input',
    description: 'Asks two questions at once (two elicitations), then answers with both.',
    input: z.object({}).strict(),
    ...readOnly,
    handler: async () => {
      const responses = currentRequest().inputResponses;
      const name = accepted(responses, 'name');
      const confirm = accepted(responses, 'confirm');
      if (name && confirm) return text(`Hello, ${String(name['name'])}; confirmed.`);
      return inputRequired({
        inputRequests: {
          ...(name ? {} : { name: askName() }),
          ...(confirm ? {} : { confirm: askConfirm('Confirm?') }),
        },
      });
    },
  }),
  defineTool({
    name: 'test_tool_with_task',
    description: 'Asks for a name before its task starts, then greets the name from the task.',
    input: z.object({}).strict(),
    ...readOnly,
    handler: async () => {
      const name = accepted(currentRequest().inputResponses, 'user_name')?.['name'];
      return text(`Hello, ${typeof name === 'string' ? name : 'stranger'}!`);
    },
  }),
];

export const conformanceTaskSupport: Record<string, McpTaskSupport> = {
  slow_compute: { support: 'optional' },
  failing_job: { support: 'required' },
  protocol_error_job: { support: 'optional' },
  confirm_delete: { support: 'optional' },
  multi_input: { support: 'optional' },
  test_tool_with_task: {
    support: 'required',
    inputFirst: (request) =>
      typeof accepted(request.inputResponses, 'user_name')?.['name'] === 'string'
        ? null
        : (inputRequired({ inputRequests: { user_name: askName() } }) as Record<string, unknown>),
  },
};
