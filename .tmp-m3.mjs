import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { mkdtempSync } from 'node:fs';
const c = new Client({ name: 'm', version: '1' });
await c.connect(new StdioClientTransport({ command: process.execPath, args: ['/work/wt-ergo/bin/airlock.js', 'stdio', '--data', mkdtempSync('/tmp/m-'), '--doors', process.argv[2] ?? 'scene,notes,page', '--relay-port', '0'], stderr: 'pipe' }));
const { tools } = await c.listTools();
let d=0,i=0,o=0,a=0,all=0;
for (const t of tools) { d+=(t.description??'').length; i+=JSON.stringify(t.inputSchema).length; o+=JSON.stringify(t.outputSchema??'').length; a+=JSON.stringify(t.annotations??'').length; }
all = JSON.stringify({tools}).length;
console.log({n: tools.length, all, desc: d, input: i, output: o, annotations: a});
if (process.argv[3]) console.log(JSON.stringify(tools.find(t=>t.name===process.argv[3]), null, 1));
await c.close();
