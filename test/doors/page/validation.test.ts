/** Wrong types in page tool arguments are reported as wrong types (authority.md §4). */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPageDoor } from '../../../src/doors/page/door.js';
import { loadConfig } from '../../../src/doors/page/config.js';
import type { ToolResult } from '../../../src/transport/surface.js';
import { callPresented, conn, testKernel, type TestKernel } from '../../helpers/kernel.js';

let tk: TestKernel;
beforeAll(async () => {
  const config = Object.freeze({ ...loadConfig({ WU_MCP_TOKEN: 'v'.repeat(40) }), port: 0 });
  tk = await testKernel([createPageDoor({ config, web: false })]);
});
afterAll(async () => {
  await tk.dispose();
});

async function refusal(tool: string, args: unknown) {
  const shown = (await callPresented(tk.kernel, 'page', tool, args, {
    connection: conn(),
  })) as ToolResult;
  expect(shown.isError).toBe(true);
  return JSON.parse(String(shown.content[0]!.text)) as { code: string; message: string };
}

describe('page tool arguments of the wrong type', () => {
  it('wu_list_events with limit "5" says it must be an integer from 1 to 200, got the string "5"', async () => {
    const r = await refusal('wu_list_events', { limit: '5' });
    expect(r.code).toBe('malformedRequest');
    expect(r.message).toContain(
      '\'limit\' must be an integer between 1 and 200; got the string "5"',
    );
  });

  it('wu_screenshot with quality "high" says it must be a number from 0 to 1', async () => {
    const r = await refusal('wu_screenshot', { quality: 'high' });
    expect(r.message).toContain(
      '\'quality\' must be a number between 0 and 1; got the string "high"',
    );
  });

  it('wu_type with clear "yes" says it must be a boolean', async () => {
    const r = await refusal('wu_type', { selector: '#q', text: 'x', clear: 'yes' });
    expect(r.message).toContain(
      '\'clear\' must be a boolean (true or false); got the string "yes"',
    );
  });
});
