import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { mkdtempSync } from 'node:fs';
const c = new Client({ name: 'm', version: '1' });
await c.connect(new StdioClientTransport({ command: process.execPath, args: ['/work/wt-ergo/bin/airlock.js', 'stdio', '--data', mkdtempSync('/tmp/m-'), '--doors', 'scene,notes'], stderr: 'pipe' }));
const { tools } = await c.listTools();
const t = tools.find((x) => x.name === process.argv[2]);
console.log(JSON.stringify(t, null, 1));
await c.close();
