/**
 * Multi-round-trip fixtures (SEP-2322, the `input-required-result-*`
 * scenarios): a tool answers `input_required` with the requests it needs and,
 * where it keeps state across rounds, an HMAC-sealed `requestState`; the
 * client retries with `inputResponses`. Missing or unusable answers are asked
 * for again, never answered with an error; a forged or altered state is
 * refused with -32602.
 */
import { z } from 'zod';
import { inputRequired, inputResponse } from '@modelcontextprotocol/server';
import type {
  CallToolResult,
  InputRequest,
  InputRequiredResult,
} from '@modelcontextprotocol/server';
import { defineTool, failure, type AnyToolDef, type Failure } from '../../../kernel/index.js';
import { currentRequest } from './request-scope.js';
import { samplingText } from './elicitation-tools.js';
import type { RequestStateSeal, StatePayload } from './request-state.js';

type Outcome = CallToolResult | InputRequiredResult | Failure;

const noArgs = z.object({}).strict();
const readOnly = { effect: 'read', annotations: { openWorldHint: false } } as const;
const text = (value: string): CallToolResult => ({ content: [{ type: 'text', text: value }] });

const askName = (message = 'What is your name?') =>
  inputRequired.elicit({
    message,
    requestedSchema: {
      type: 'object',
      properties: { name: { type: 'string' } },
      required: ['name'],
    },
  });
const askConfirm = (message: string) =>
  inputRequired.elicit({
    message,
    requestedSchema: { type: 'object', properties: { ok: { type: 'boolean' } }, required: ['ok'] },
  });
const askColor = () =>
  inputRequired.elicit({
    message: 'Step 2: What is your favorite color?',
    requestedSchema: {
      type: 'object',
      properties: { color: { type: 'string' } },
      required: ['color'],
    },
  });
const askModel = (prompt: string, maxTokens: number) =>
  inputRequired.createMessage({
    messages: [{ role: 'user', content: { type: 'text', text: prompt } }],
    maxTokens,
  });

/** Accepted elicitation content under `key`, or undefined (missing, declined, not an elicitation). */
function accepted(key: string): Record<string, unknown> | undefined {
  const answer = inputResponse(currentRequest().inputResponses, key);
  return answer.kind === 'elicit' && answer.action === 'accept'
    ? (answer.content ?? {})
    : undefined;
}

/** Refusal of a requestState that fails verification (SEP-2322: MUST reject), as JSON-RPC -32602. */
const badState = () =>
  failure(
    'malformedRequest',
    'requestState failed its integrity check (altered, expired or minted for another tool); call the tool again without it.',
    { jsonRpc: { code: -32602, data: { reason: 'invalid_request_state' } } },
  );

/** What a tool keeps across rounds: the verified state of this round, and asking with a sealed state. */
interface Rounds {
  /** The verified state of this round: null when none was sent, a Failure when it does not verify. */
  stateOf(tool: string): StatePayload | null | Failure;
  ask(inputRequests: Record<string, InputRequest>, state?: StatePayload): InputRequiredResult;
}

export function createInputRequiredTools(seal: RequestStateSeal): AnyToolDef[] {
  const rounds: Rounds = {
    stateOf: (tool) => {
      const raw = currentRequest().requestState;
      if (raw === undefined) return null;
      return seal.open(raw, tool) ?? badState();
    },
    ask: (inputRequests, state) =>
      inputRequired({ inputRequests, ...(state ? { requestState: seal.seal(state) } : {}) }),
  };
  return [
    elicitationTool,
    samplingTool,
    listRootsTool,
    requestStateTool,
    multipleInputsTool,
    multiRoundTool,
    tamperedStateTool,
    capabilitiesTool,
  ].map((make) => make(rounds));
}

const tool = (name: string, description: string, run: () => Outcome) =>
  defineTool({
    name,
    description,
    input: noArgs,
    ...readOnly,
    handler: async () => run(),
  });

function elicitationTool(r: Rounds): AnyToolDef {
  return tool(
    'test_input_required_result_elicitation',
    'Asks for the caller name (elicitation), then greets them.',
    () => {
      const answer = accepted('user_name');
      const name = answer?.['name'];
      if (typeof name !== 'string') return r.ask({ user_name: askName() });
      return text(`Hello, ${name}!`);
    },
  );
}

function samplingTool(r: Rounds): AnyToolDef {
  return tool(
    'test_input_required_result_sampling',
    'Asks the client model a question (sampling), then reports the answer.',
    () => {
      const answer = inputResponse(currentRequest().inputResponses, 'capital_question');
      if (answer.kind !== 'sampling')
        return r.ask({ capital_question: askModel('What is the capital of France?', 100) });
      return text(`The model answered: ${samplingText(answer.result)}`);
    },
  );
}

function listRootsTool(r: Rounds): AnyToolDef {
  return tool(
    'test_input_required_result_list_roots',
    'Asks for the client roots (roots/list), then lists them.',
    () => {
      const answer = inputResponse(currentRequest().inputResponses, 'client_roots');
      if (answer.kind !== 'roots') return r.ask({ client_roots: inputRequired.listRoots() });
      return text(`Client roots: ${answer.roots.map((r) => r.uri).join(', ') || '(none)'}`);
    },
  );
}

function requestStateTool(r: Rounds): AnyToolDef {
  return tool(
    'test_input_required_result_request_state',
    'Asks for confirmation with sealed requestState; the retry must echo it.',
    () => {
      const name = 'test_input_required_result_request_state';
      const state = r.stateOf(name);
      if (state && 'ok' in state) return state;
      if (state === null || !accepted('confirm'))
        return r.ask({ confirm: askConfirm('Please confirm') }, { tool: name, round: 1 });
      return text(
        `state-ok: requestState verified (round ${state.round}) and confirmation received.`,
      );
    },
  );
}

function multipleInputsTool(r: Rounds): AnyToolDef {
  return tool(
    'test_input_required_result_multiple_inputs',
    'Asks for a name, a model greeting and the roots in one round.',
    () => {
      const name = 'test_input_required_result_multiple_inputs';
      const state = r.stateOf(name);
      if (state && 'ok' in state) return state;
      const responses = currentRequest().inputResponses;
      const user = accepted('user_name')?.['name'];
      const greeting = inputResponse(responses, 'greeting');
      const roots = inputResponse(responses, 'client_roots');
      // Ask for everything on the first round; afterwards only for what is still missing.
      const missing: Record<string, InputRequest> = {};
      if (state === null || typeof user !== 'string') missing['user_name'] = askName();
      if (state === null || greeting.kind !== 'sampling')
        missing['greeting'] = askModel('Generate a greeting', 50);
      if (state === null || roots.kind !== 'roots')
        missing['client_roots'] = inputRequired.listRoots();
      if (Object.keys(missing).length > 0) return r.ask(missing, { tool: name, round: 1 });
      const greetingText = greeting.kind === 'sampling' ? samplingText(greeting.result) : '';
      const rootCount = roots.kind === 'roots' ? roots.roots.length : 0;
      return text(`${greetingText} (for ${String(user)}; ${rootCount} root(s))`);
    },
  );
}

function multiRoundTool(r: Rounds): AnyToolDef {
  return tool(
    'test_input_required_result_multi_round',
    'Asks for a name, then a colour, carrying sealed state across three rounds.',
    () => {
      const name = 'test_input_required_result_multi_round';
      const state = r.stateOf(name);
      if (state && 'ok' in state) return state;
      const step1 = { step1: askName('Step 1: What is your name?') };
      if (state === null) return r.ask(step1, { tool: name, round: 1 });
      if (state.round === 1) {
        const user = accepted('step1')?.['name'];
        if (typeof user !== 'string') return r.ask(step1, { tool: name, round: 1 });
        return r.ask({ step2: askColor() }, { tool: name, round: 2, data: { name: user } });
      }
      const color = accepted('step2')?.['color'];
      if (typeof color !== 'string') return r.ask({ step2: askColor() }, state);
      return text(`${String(state.data?.['name'])} likes ${color}.`);
    },
  );
}

function tamperedStateTool(r: Rounds): AnyToolDef {
  return tool(
    'test_input_required_result_tampered_state',
    'Seals its requestState; an altered state is refused with -32602.',
    () => {
      const name = 'test_input_required_result_tampered_state';
      const state = r.stateOf(name);
      if (state && 'ok' in state) return state;
      if (state === null || !accepted('confirm'))
        return r.ask({ confirm: askConfirm('Please confirm') }, { tool: name, round: 1 });
      return text('state-ok: untampered requestState accepted.');
    },
  );
}

function capabilitiesTool(r: Rounds): AnyToolDef {
  return tool(
    'test_input_required_result_capabilities',
    'Asks only for input kinds the client declared (sampling, elicitation, roots).',
    () => {
      const caps = currentRequest().clientCapabilities;
      const responses = currentRequest().inputResponses;
      if (responses && Object.keys(responses).length > 0)
        return text(`Received ${Object.keys(responses).length} answer(s).`);
      const wanted: Record<string, InputRequest> = {};
      if (caps['sampling']) wanted['model'] = askModel('Say hello.', 20);
      if (caps['elicitation']) wanted['user_name'] = askName();
      if (caps['roots']) wanted['client_roots'] = inputRequired.listRoots();
      if (Object.keys(wanted).length === 0)
        return text('The client declared no capability this tool can ask through.');
      return r.ask(wanted);
    },
  );
}
