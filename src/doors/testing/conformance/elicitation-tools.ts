/**
 * Fixture tools that need the client: sampling and elicitation. They are
 * written once, in the 2026-07-28 multi-round-trip style (return
 * `input_required`, read `inputResponses` on the retry); on a 2025-era
 * session the SDK's legacy shim turns each embedded request into a real
 * server→client `sampling/createMessage` or `elicitation/create` on the
 * call's stream and calls the tool again with the answers. Every round is
 * a full pass through the kernel pipeline.
 */
import { z } from 'zod';
import { inputRequired, inputResponse } from '@modelcontextprotocol/server';
import type {
  CallToolResult,
  ElicitRequestFormParams,
  InputRequiredResult,
} from '@modelcontextprotocol/server';
import { defineTool, type AnyToolDef } from '../../../kernel/index.js';
import { currentRequest } from './request-scope.js';

type Outcome = CallToolResult | InputRequiredResult;
type RequestedSchema = ElicitRequestFormParams['requestedSchema'];

const readOnly = { effect: 'read', annotations: { openWorldHint: false } } as const;
const text = (value: string): CallToolResult => ({ content: [{ type: 'text', text: value }] });

/** One elicitation round trip: ask under `key`, then report what the user did. */
function elicitOnce(
  key: string,
  message: string,
  requestedSchema: RequestedSchema,
  prefix: string,
): Outcome {
  const answer = inputResponse(currentRequest().inputResponses, key);
  if (answer.kind !== 'elicit') {
    return inputRequired({
      inputRequests: { [key]: inputRequired.elicit({ message, requestedSchema }) },
    });
  }
  return text(
    `${prefix}: action=${answer.action}, content=${JSON.stringify(answer.content ?? {})}`,
  );
}

/** The first text block of a sampling result (a single block, or an array when tools were involved). */
export function samplingText(result: { content: unknown }): string {
  const blocks = Array.isArray(result.content) ? result.content : [result.content];
  const first = blocks.find(
    (b): b is { type: 'text'; text: string } => (b as { type?: unknown })?.type === 'text',
  );
  return first?.text ?? '(no text in the sampling result)';
}

const SEP1034_SCHEMA = {
  type: 'object',
  properties: {
    name: { type: 'string', description: 'User name', default: 'John Doe' },
    age: { type: 'integer', description: 'User age', default: 30 },
    score: { type: 'number', description: 'User score', default: 95.5 },
    status: {
      type: 'string',
      description: 'User status',
      enum: ['active', 'inactive', 'pending'],
      default: 'active',
    },
    verified: { type: 'boolean', description: 'Verification status', default: true },
  },
  required: [],
} as RequestedSchema;

// All five enum shapes of SEP-1330, including the deprecated enumNames form.
const SEP1330_SCHEMA = {
  type: 'object',
  properties: {
    untitledSingle: {
      type: 'string',
      description: 'Select one option',
      enum: ['option1', 'option2', 'option3'],
    },
    titledSingle: {
      type: 'string',
      description: 'Select one option with titles',
      oneOf: [
        { const: 'value1', title: 'First Option' },
        { const: 'value2', title: 'Second Option' },
        { const: 'value3', title: 'Third Option' },
      ],
    },
    legacyEnum: {
      type: 'string',
      description: 'Select one option (legacy)',
      enum: ['opt1', 'opt2', 'opt3'],
      enumNames: ['Option One', 'Option Two', 'Option Three'],
    },
    untitledMulti: {
      type: 'array',
      description: 'Select multiple options',
      minItems: 1,
      maxItems: 3,
      items: { type: 'string', enum: ['option1', 'option2', 'option3'] },
    },
    titledMulti: {
      type: 'array',
      description: 'Select multiple options with titles',
      minItems: 1,
      maxItems: 3,
      items: {
        anyOf: [
          { const: 'value1', title: 'First Choice' },
          { const: 'value2', title: 'Second Choice' },
          { const: 'value3', title: 'Third Choice' },
        ],
      },
    },
  },
  required: [],
} as RequestedSchema;

export const elicitationTools: AnyToolDef[] = [
  defineTool({
    name: 'test_sampling',
    description: 'Asks the client for an LLM completion of `prompt` and returns its text.',
    input: z.object({ prompt: z.string().describe('The prompt to send to the LLM') }).strict(),
    ...readOnly,
    handler: async ({ prompt }): Promise<Outcome> => {
      const answer = inputResponse(currentRequest().inputResponses, 'completion');
      if (answer.kind !== 'sampling') {
        const request = inputRequired.createMessage({
          messages: [{ role: 'user', content: { type: 'text', text: prompt } }],
          maxTokens: 100,
        });
        return inputRequired({ inputRequests: { completion: request } });
      }
      return text(`LLM response: ${samplingText(answer.result)}`);
    },
  }),
  defineTool({
    name: 'test_elicitation',
    description: 'Asks the user (elicitation) the given message and returns their answer.',
    input: z.object({ message: z.string().describe('The message to show the user') }).strict(),
    ...readOnly,
    handler: async ({ message }) =>
      elicitOnce(
        'response',
        message,
        {
          type: 'object',
          properties: { response: { type: 'string', description: "User's response" } },
          required: ['response'],
        },
        'User response',
      ),
  }),
  defineTool({
    name: 'test_elicitation_sep1034_defaults',
    description:
      'Elicits a form whose string, integer, number, enum and boolean fields have defaults (SEP-1034).',
    input: z.object({}).strict(),
    ...readOnly,
    handler: async () =>
      elicitOnce(
        'form',
        'Please review and update the form fields with defaults',
        SEP1034_SCHEMA,
        'Elicitation completed',
      ),
  }),
  defineTool({
    name: 'test_elicitation_sep1330_enums',
    description: 'Elicits a form with all five enum schema shapes (SEP-1330).',
    input: z.object({}).strict(),
    ...readOnly,
    handler: async () =>
      elicitOnce(
        'choices',
        'Please select options from the enum fields',
        SEP1330_SCHEMA,
        'Elicitation completed',
      ),
  }),
  defineTool({
    name: 'test_missing_capability',
    description:
      'Needs sampling; a client that did not declare it gets MissingRequiredClientCapabilityError (-32021).',
    input: z.object({}).strict(),
    ...readOnly,
    handler: async (): Promise<Outcome> => {
      const answer = inputResponse(currentRequest().inputResponses, 'summary');
      if (answer.kind === 'sampling') return text(`Summary: ${samplingText(answer.result)}`);
      // The SDK's input_required seam checks this request against the client's declared capabilities.
      const request = inputRequired.createMessage({
        messages: [
          { role: 'user', content: { type: 'text', text: 'Summarise the conformance run.' } },
        ],
        maxTokens: 50,
      });
      return inputRequired({ inputRequests: { summary: request } });
    },
  }),
  defineTool({
    name: 'test_streaming_elicitation',
    description:
      'Needs one elicitation; its response stream carries only the input_required result.',
    input: z.object({}).strict(),
    ...readOnly,
    handler: async () =>
      elicitOnce(
        'confirm',
        'Continue the streaming test?',
        { type: 'object', properties: { confirmed: { type: 'boolean' } }, required: ['confirmed'] },
        'Streaming elicitation completed',
      ),
  }),
];
