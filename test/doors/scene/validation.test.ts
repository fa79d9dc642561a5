/** Wrong types in scene tool arguments are reported as wrong types (authority.md §4). */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { sceneDoor, tempDir } from './helpers.js';
import type { ToolResult } from '../../../src/transport/surface.js';
import { callPresented, conn, testKernel, type TestKernel } from '../../helpers/kernel.js';
import { mountOf } from '../../../src/kernel/kernel.js';

let tk: TestKernel;
let mount: string;
beforeAll(async () => {
  const data = tempDir();
  const door = await sceneDoor(data);
  mount = mountOf(door);
  tk = await testKernel([door], { dir: data });
});
afterAll(async () => {
  await tk.dispose();
});

/** The refusal's `{code, message}` as the scene door shows it on MCP. */
async function refusal(tool: string, args: unknown) {
  const shown = (await callPresented(tk.kernel, mount, tool, args, {
    connection: conn(),
  })) as ToolResult;
  expect(shown.isError).toBe(true);
  return JSON.parse(String(shown.content[0]!.text)) as { code: string; message: string };
}

describe('scene tool arguments of the wrong type', () => {
  it('koharu.apply with op given as a string says op must be an object, got the string', async () => {
    const r = await refusal('koharu.apply', { op: 'add_node' });
    expect(r.code).toBe('malformedRequest');
    expect(r.message).toContain('\'op\' must be an object; got the string "add_node"');
    expect(r.message).not.toContain('missing');
  });

  it('koharu.apply with a number where a page id goes names the nested path and the number', async () => {
    const r = await refusal('koharu.apply', { op: { removeNode: { page: 7, id: randomUUID() } } });
    expect(r.message).toContain("'op.removeNode.page' must be a string; got the number 7");
  });

  it('koharu.start_pipeline with an unknown sourceLanguage names the languages OCR reads', async () => {
    const r = await refusal('koharu.start_pipeline', {
      steps: ['tesseract'],
      sourceLanguage: 'fr',
    });
    expect(r.code).toBe('malformedRequest');
    expect(r.message).toContain("'sourceLanguage'");
    for (const lang of ['en', 'ja', 'zh', 'ko']) expect(r.message).toContain(lang);
    expect(r.message).toContain('fr');
  });

  it('koharu.get_job with a numeric jobId says it must be a UUID string', async () => {
    const r = await refusal('koharu.get_job', { jobId: 5 });
    expect(r.message).toContain("'jobId' must be a string; got the number 5");
  });
});
