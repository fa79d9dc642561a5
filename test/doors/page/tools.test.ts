import { describe, expect, it } from 'vitest';
import { createPageTools } from '../../../src/doors/page/tools.js';
import { loadConfig } from '../../../src/doors/page/config.js';
import { jsonSchemaOf } from '../../../src/kernel/kernel.js';
import { annotationsOf, effectOf } from '../../../src/kernel/calls/effect.js';

// The wire contract of the 18 tools (spec/page.md "Tools"): names, argument
// names, ranges and defaults. A change here must be deliberate.
const SCHEMAS: Record<string, unknown> = {
  wu_conexion: {
    type: 'object',
    properties: {},
    additionalProperties: false,
  },
  wu_list_actions: {
    type: 'object',
    properties: {},
    additionalProperties: false,
  },
  wu_execute_action: {
    type: 'object',
    properties: {
      action: {
        type: 'string',
        minLength: 1,
        maxLength: 200,
      },
      params: {
        type: 'object',
        propertyNames: {
          type: 'string',
        },
        additionalProperties: {},
      },
    },
    required: ['action'],
    additionalProperties: false,
  },
  wu_status: {
    type: 'object',
    properties: {},
    additionalProperties: false,
  },
  wu_list_apps: {
    type: 'object',
    properties: {},
    additionalProperties: false,
  },
  wu_list_events: {
    type: 'object',
    properties: {
      limit: {
        default: 20,
        type: 'integer',
        minimum: 1,
        maximum: 200,
      },
    },
    additionalProperties: false,
  },
  wu_get_state: {
    type: 'object',
    properties: {
      path: {
        default: '',
        type: 'string',
        maxLength: 1000,
      },
    },
    additionalProperties: false,
  },
  wu_set_state: {
    type: 'object',
    properties: {
      path: {
        type: 'string',
        minLength: 1,
        maxLength: 1000,
      },
      value: {},
    },
    required: ['path', 'value'],
    additionalProperties: false,
  },
  wu_emit_event: {
    type: 'object',
    properties: {
      event: {
        type: 'string',
        minLength: 1,
        maxLength: 200,
      },
      data: {},
    },
    required: ['event'],
    additionalProperties: false,
  },
  wu_navigate: {
    type: 'object',
    properties: {
      route: {
        type: 'string',
        minLength: 1,
        maxLength: 2000,
      },
    },
    required: ['route'],
    additionalProperties: false,
  },
  wu_snapshot: {
    type: 'object',
    properties: {
      appName: {
        type: 'string',
        minLength: 1,
        maxLength: 200,
      },
      // Beyond the reference (issue 17): a part of the page, and the answer's size.
      selector: {
        type: 'string',
        minLength: 1,
        maxLength: 1000,
      },
      maxChars: {
        type: 'integer',
        minimum: 1000,
        maximum: 1000000,
      },
      delta: { type: 'boolean' },
    },
    additionalProperties: false,
  },
  wu_screenshot: {
    type: 'object',
    properties: {
      selector: {
        type: 'string',
        minLength: 1,
        maxLength: 1000,
      },
      quality: {
        default: 0.8,
        type: 'number',
        minimum: 0,
        maximum: 1,
      },
    },
    additionalProperties: false,
  },
  wu_click: {
    type: 'object',
    properties: {
      selector: {
        type: 'string',
        minLength: 1,
        maxLength: 1000,
      },
      text: {
        type: 'string',
        minLength: 1,
        maxLength: 1000,
      },
      ref: {
        type: 'string',
        minLength: 1,
        maxLength: 100,
      },
    },
    additionalProperties: false,
  },
  wu_type: {
    type: 'object',
    properties: {
      selector: {
        type: 'string',
        minLength: 1,
        maxLength: 1000,
      },
      ref: {
        type: 'string',
        minLength: 1,
        maxLength: 100,
      },
      text: {
        type: 'string',
        maxLength: 100000,
      },
      clear: {
        default: false,
        type: 'boolean',
      },
      submit: {
        default: false,
        type: 'boolean',
      },
    },
    required: ['text'],
    additionalProperties: false,
  },
  wu_console: {
    type: 'object',
    properties: {
      level: {
        default: 'all',
        type: 'string',
        enum: ['all', 'log', 'warn', 'error'],
      },
      limit: {
        default: 50,
        type: 'integer',
        minimum: 1,
        maximum: 500,
      },
    },
    additionalProperties: false,
  },
  wu_network: {
    type: 'object',
    properties: {
      method: {
        type: 'string',
        minLength: 1,
        maxLength: 20,
      },
      status: {
        type: 'integer',
        minimum: 100,
        maximum: 599,
      },
      limit: {
        default: 50,
        type: 'integer',
        minimum: 1,
        maximum: 500,
      },
    },
    additionalProperties: false,
  },
  wu_mount_app: {
    type: 'object',
    properties: {
      appName: {
        type: 'string',
        minLength: 1,
        maxLength: 200,
      },
      container: {
        type: 'string',
        minLength: 1,
        maxLength: 1000,
      },
    },
    required: ['appName'],
    additionalProperties: false,
  },
  wu_unmount_app: {
    type: 'object',
    properties: {
      appName: {
        type: 'string',
        minLength: 1,
        maxLength: 200,
      },
    },
    required: ['appName'],
    additionalProperties: false,
  },
};

describe('wu_* tool schemas', () => {
  it('publish exactly the reference names, arguments, ranges and defaults', () => {
    const tools = createPageTools({
      config: loadConfig({ WU_MCP_TOKEN: 'x'.repeat(20) }),
      relay: () => null,
    });
    const published = Object.fromEntries(
      tools.map((t) => {
        const { $schema: _ignored, ...schema } = jsonSchemaOf(t.input);
        return [t.name, schema];
      }),
    );
    expect(published).toEqual(SCHEMAS);
  });

  it('marks the reading tools read-only, and promises nothing about page actions', () => {
    const tools = createPageTools({
      config: loadConfig({ WU_MCP_TOKEN: 'x'.repeat(20) }),
      relay: () => null,
    });
    const readOnly = tools.filter((t) => annotationsOf(t)?.readOnlyHint).map((t) => t.name);
    expect(readOnly.sort()).toEqual(
      [
        'wu_conexion',
        'wu_console',
        'wu_get_state',
        'wu_list_actions',
        'wu_list_apps',
        'wu_list_events',
        'wu_network',
        'wu_screenshot',
        'wu_snapshot',
        'wu_status',
      ].sort(),
    );
    for (const t of tools)
      expect(annotationsOf(t)?.destructiveHint, t.name).toBe(
        annotationsOf(t)?.readOnlyHint || t.name === 'wu_execute_action' ? undefined : false,
      );
  });

  it("decides a page action's effect from the page: destructive when it asks to confirm, else a write", async () => {
    const listed = {
      actions: [
        { name: 'deleteAllTodos', confirm: true },
        { name: 'addTodo', confirm: false },
      ],
    };
    const relay = {
      enviar: async (command: string) => (command === 'list_actions' ? listed : null),
      conectado: () => true,
      address: () => null,
      origin: () => 'http://127.0.0.1:5173',
    };
    const tools = createPageTools({
      config: loadConfig({ WU_MCP_TOKEN: 'x'.repeat(20) }),
      relay: () => relay,
    });
    const execute = tools.find((t) => t.name === 'wu_execute_action')!;
    const effect = (action: string) =>
      effectOf(execute, execute.input.parse({ action, params: {} }));
    expect(await effect('deleteAllTodos')).toBe('destructive');
    expect(await effect('addTodo')).toBe('write');
    // An action the page does not list runs as a write: the page refuses it.
    expect(await effect('unknown')).toBe('write');
    // With no page to say, the action is destructive (asked), never a guessed write.
    const offline = createPageTools({
      config: loadConfig({ WU_MCP_TOKEN: 'x'.repeat(20) }),
      relay: () => null,
    }).find((t) => t.name === 'wu_execute_action')!;
    expect(await effectOf(offline, offline.input.parse({ action: 'deleteAllTodos' }))).toBe(
      'destructive',
    );
    expect(
      await execute.policy!.targets!(execute.input.parse({ action: 'addTodo' }), {} as never),
    ).toEqual(['http://127.0.0.1:5173:addtodo', 'http://127.0.0.1:5173:addTodo']);
    expect(annotationsOf(execute)).toEqual({ readOnlyHint: false, openWorldHint: true });
  });
});
