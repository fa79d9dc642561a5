/**
 * The conformance fixtures over stdio (used by scripts/conformance.mjs): the
 * official suites can only test servers by URL, so this drives
 * `airlock stdio --doors conformance` with the SDK client on one protocol era
 * and checks a handful of fixtures end to end. It is ours, not the suite.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';

/** The conformance fixtures over stdio, with the SDK client, on one protocol era. */
export async function stdioSmoke(root, era, cleanups) {
  const data = mkdtempSync(join(tmpdir(), 'airlock-conformance-stdio-'));
  cleanups.push(async () => rmSync(data, { recursive: true, force: true }));
  const client = new Client(
    { name: 'airlock-conformance-smoke', version: '1.0.0' },
    {
      capabilities: { sampling: {}, elicitation: {}, roots: {} },
      ...(era === 'legacy' ? {} : { versionNegotiation: { mode: { pin: era } } }),
    },
  );
  client.setRequestHandler('elicitation/create', async () => ({
    action: 'accept',
    content: { name: 'Ada', response: 'yes' },
  }));
  client.setRequestHandler('sampling/createMessage', async () => ({
    role: 'assistant',
    content: { type: 'text', text: 'Paris' },
    model: 'smoke',
    stopReason: 'endTurn',
  }));
  client.setRequestHandler('roots/list', async () => ({
    roots: [{ uri: 'file:///smoke', name: 'smoke' }],
  }));
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [join(root, 'bin/airlock.js'), 'stdio', '--doors', 'conformance', '--data', data],
    env: { ...process.env, AIRLOCK_ENABLE_TEST_DOORS: '1' },
    stderr: 'ignore',
  });
  const results = [];
  const check = async (name, fn) => {
    try {
      const problem = await fn();
      results.push({ name, ok: !problem, detail: problem || '' });
    } catch (error) {
      results.push({
        name,
        ok: false,
        detail: error instanceof Error ? error.message : String(error),
      });
    }
  };
  const textOf = (r) => r.content?.find((c) => c.type === 'text')?.text ?? '';
  try {
    await client.connect(transport);
    cleanups.push(() => client.close());
    await check('tools/list offers the fixtures', async () => {
      const { tools } = await client.listTools();
      const names = new Set(tools.map((t) => t.name));
      const missing = [
        'test_simple_text',
        'test_tool_with_progress',
        'test_input_required_result_elicitation',
      ].filter((n) => !names.has(n));
      return missing.length ? `missing ${missing.join(', ')}` : '';
    });
    await check('tools/call test_simple_text', async () => {
      const r = await client.callTool({ name: 'test_simple_text', arguments: {} });
      return textOf(r) === 'This is a simple text response for testing.'
        ? ''
        : `got ${JSON.stringify(r)}`;
    });
    await check('progress notifications before the result', async () => {
      // Watched on the transport: the SDK client can drop a progress notification that
      // arrives in the same read as the response, which is not the server's doing.
      const seen = [];
      const deliver = transport.onmessage;
      transport.onmessage = (message, extra) => {
        if (message.method === 'notifications/progress') seen.push(message.params.progress);
        if ('id' in message && !('method' in message)) seen.push('result');
        deliver?.(message, extra);
      };
      try {
        await client.callTool(
          { name: 'test_tool_with_progress', arguments: {} },
          { onprogress: () => undefined },
        );
      } finally {
        transport.onmessage = deliver;
      }
      return seen.join(',') === '0,50,100,result' ? '' : `frames ${JSON.stringify(seen)}`;
    });
    await check('isError result for a throwing tool', async () => {
      const r = await client.callTool({ name: 'test_error_handling', arguments: {} });
      return r.isError === true && textOf(r).includes('internal') ? '' : `got ${JSON.stringify(r)}`;
    });
    await check('elicitation round trip', async () => {
      const r = await client.callTool({
        name: 'test_input_required_result_elicitation',
        arguments: {},
      });
      return textOf(r) === 'Hello, Ada!' ? '' : `got ${JSON.stringify(r)}`;
    });
    await check('sampling round trip', async () => {
      const r = await client.callTool({
        name: 'test_input_required_result_sampling',
        arguments: {},
      });
      return textOf(r).includes('Paris') ? '' : `got ${JSON.stringify(r)}`;
    });
    await check('resources/read (template)', async () => {
      const r = await client.readResource({ uri: 'test://template/42/data' });
      return r.contents?.[0]?.text?.includes('"id":"42"') ? '' : `got ${JSON.stringify(r)}`;
    });
    await check('prompts/get with arguments', async () => {
      const r = await client.getPrompt({
        name: 'test_prompt_with_arguments',
        arguments: { arg1: 'a', arg2: 'b' },
      });
      return JSON.stringify(r.messages).includes("arg1='a'") ? '' : `got ${JSON.stringify(r)}`;
    });
    await check('completion/complete', async () => {
      const r = await client.complete({
        ref: { type: 'ref/prompt', name: 'test_prompt_with_arguments' },
        argument: { name: 'arg1', value: 'par' },
      });
      return r.completion.values.includes('paris') ? '' : `got ${JSON.stringify(r)}`;
    });
  } catch (error) {
    results.push({
      name: 'connect',
      ok: false,
      detail: error instanceof Error ? error.message : String(error),
    });
  } finally {
    await client.close().catch(() => undefined);
  }
  return results;
}
