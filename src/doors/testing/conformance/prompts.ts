/**
 * Fixture prompts (prompts-*, completion-complete, and the multi-round-trip
 * `test_input_required_result_prompt`) and argument completion for
 * `test_prompt_with_arguments`.
 */
import { inputRequired, inputResponse, ProtocolError } from '@modelcontextprotocol/server';
import type {
  GetPromptResult,
  InputRequiredResult,
  Prompt,
  Server,
} from '@modelcontextprotocol/server';
import { PNG_BASE64 } from './media.js';

type PromptOutcome = GetPromptResult | InputRequiredResult;

interface FixturePrompt extends Prompt {
  get(
    args: Record<string, string>,
    inputResponses: Record<string, unknown> | undefined,
  ): PromptOutcome;
}

const user = (content: GetPromptResult['messages'][number]['content']) => ({
  role: 'user' as const,
  content,
});

const PROMPTS: FixturePrompt[] = [
  {
    name: 'test_simple_prompt',
    title: 'Simple Test Prompt',
    description: 'A simple prompt without arguments',
    get: () => ({
      messages: [user({ type: 'text', text: 'This is a simple prompt for testing.' })],
    }),
  },
  {
    name: 'test_prompt_with_arguments',
    title: 'Prompt With Arguments',
    description: 'A prompt with two required arguments',
    arguments: [
      { name: 'arg1', description: 'First test argument', required: true },
      { name: 'arg2', description: 'Second test argument', required: true },
    ],
    get: ({ arg1, arg2 }) => ({
      messages: [
        user({ type: 'text', text: `Prompt with arguments: arg1='${arg1}', arg2='${arg2}'` }),
      ],
    }),
  },
  {
    name: 'test_prompt_with_embedded_resource',
    title: 'Prompt With Embedded Resource',
    description: 'A prompt that embeds a resource',
    arguments: [
      { name: 'resourceUri', description: 'URI of the resource to embed', required: true },
    ],
    get: ({ resourceUri }) => ({
      messages: [
        user({
          type: 'resource',
          resource: {
            uri: resourceUri ?? '',
            mimeType: 'text/plain',
            text: 'Embedded resource content for testing.',
          },
        }),
        user({ type: 'text', text: 'Please process the embedded resource above.' }),
      ],
    }),
  },
  {
    name: 'test_prompt_with_image',
    title: 'Prompt With Image',
    description: 'A prompt that includes an image',
    get: () => ({
      messages: [
        user({ type: 'image', data: PNG_BASE64, mimeType: 'image/png' }),
        user({ type: 'text', text: 'Please analyze the image above.' }),
      ],
    }),
  },
  {
    name: 'test_input_required_result_prompt',
    title: 'Prompt Needing Input',
    description: 'Asks the user (elicitation) for context before it can be rendered (SEP-2322)',
    get: (_args, inputResponses) => {
      const answer = inputResponse(inputResponses, 'user_context');
      const context =
        answer.kind === 'elicit' && answer.action === 'accept'
          ? answer.content?.['context']
          : undefined;
      if (typeof context !== 'string') {
        return inputRequired({
          inputRequests: {
            user_context: inputRequired.elicit({
              message: 'What context should the prompt use?',
              requestedSchema: {
                type: 'object',
                properties: { context: { type: 'string' } },
                required: ['context'],
              },
            }),
          },
        });
      }
      return {
        messages: [user({ type: 'text', text: `Answer with this context in mind: ${context}` })],
      };
    },
  },
];

/** Suggestions for `test_prompt_with_arguments` arguments, filtered by the typed prefix. */
const SUGGESTIONS = ['paris', 'park', 'party', 'test', 'testValue1', 'testValue2'];

export function registerPrompts(server: Server): void {
  server.setRequestHandler('prompts/list', async () => ({
    prompts: PROMPTS.map(({ get: _get, ...prompt }) => prompt),
  }));

  server.setRequestHandler('prompts/get', async (request, ctx) => {
    const { name, arguments: args = {} } = request.params;
    const prompt = PROMPTS.find((p) => p.name === name);
    if (!prompt) {
      throw new ProtocolError(
        -32602,
        `Unknown prompt '${name}'; call prompts/list to see the available prompts.`,
      );
    }
    const missing = (prompt.arguments ?? []).filter(
      (a) => a.required && args[a.name] === undefined,
    );
    if (missing.length > 0) {
      throw new ProtocolError(
        -32602,
        `Prompt '${name}' needs the argument(s) ${missing.map((a) => `'${a.name}'`).join(', ')}.`,
      );
    }
    return prompt.get(args, ctx.mcpReq.inputResponses);
  });

  server.setRequestHandler('completion/complete', async (request) => {
    const { ref, argument } = request.params;
    const known = ref.type === 'ref/prompt' && ref.name === 'test_prompt_with_arguments';
    const values = known ? SUGGESTIONS.filter((s) => s.startsWith(argument.value)) : [];
    return { completion: { values, total: values.length, hasMore: false } };
  });
}
