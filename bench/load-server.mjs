/**
 * The child process of the `load` and `soak` benches: Airlock HTTP servers
 * (ledger + notes doors) on SQLite and, when a URL is given, PostgreSQL, and
 * bare SDK v2 servers doing the same work with no kernel (echo; an insert of
 * one row per write into the same kind of store). It answers the parent over
 * IPC: `agents` (make N agent tokens), `approve` (approve every pending
 * request), `usage` (CPU time, RSS and database sizes).
 *
 * Env: LOAD_PG_URL, LOAD_PG_SCHEMA (PostgreSQL servers, when set),
 * LOAD_KERNEL_OPTIONS (JSON kernel options, e.g. retention for the soak).
 */
import { createServer } from 'node:http';
import { randomUUID } from 'node:crypto';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { URLSearchParams } from 'node:url';
import { z } from 'zod';
import Database from 'better-sqlite3';
import pg from 'pg';
import { McpServer, createMcpHandler, isLegacyRequest } from '@modelcontextprotocol/server';
import {
  NodeStreamableHTTPServerTransport,
  toNodeHandler,
  toWebRequest,
} from '@modelcontextprotocol/node';
import { createLedgerDoor } from '../dist/doors/testing/ledger.js';
import { createNotesDoor } from '../dist/doors/notes/index.js';
import { airlockHttp, airlockKernel } from './servers.mjs';

const PG_URL = process.env.LOAD_PG_URL;
const PG_SCHEMA = process.env.LOAD_PG_SCHEMA;
const KERNEL_OPTIONS = JSON.parse(process.env.LOAD_KERNEL_OPTIONS ?? '{}');

const ECHO = z.object({ text: z.string().max(1000) }).strict();
const APPEND = z
  .object({
    operationID: z.string().uuid(),
    account: z.string().min(1).max(64),
    amount: z.number().int(),
    expectedVersion: z.number().int().min(0).nullable(),
  })
  .strict();

/** A bare McpServer factory whose write inserts one row through `insert`. */
function bareFactory(insert) {
  return () => {
    const server = new McpServer({ name: 'bare', version: '0.0.0' });
    server.registerTool(
      'ledger_echo',
      { description: 'Echo.', inputSchema: ECHO, annotations: { readOnlyHint: true } },
      async ({ text }) => ({ content: [{ type: 'text', text: JSON.stringify({ text }) }] }),
    );
    server.registerTool(
      'ledger_append',
      { description: 'Insert one row.', inputSchema: APPEND },
      async (args) => {
        await insert(args);
        return {
          content: [{ type: 'text', text: JSON.stringify({ operationID: args.operationID }) }],
        };
      },
    );
    return server;
  };
}

async function bareHttp(factory) {
  const modern = toNodeHandler(createMcpHandler(factory, { legacy: 'reject' }));
  const sessions = new Map();
  const http = createServer(async (req, res) => {
    try {
      const chunks = [];
      for await (const c of req) chunks.push(c);
      const body =
        req.method === 'POST' ? JSON.parse(Buffer.concat(chunks).toString('utf8')) : undefined;
      const sid = req.headers['mcp-session-id'];
      if (sid) return await sessions.get(sid).handleRequest(req, res, body);
      if (!(await isLegacyRequest(await toWebRequest(req, body), body)))
        return await modern(req, res, body);
      const server = factory();
      const transport = new NodeStreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (id) => sessions.set(id, transport),
        onsessionclosed: (id) => sessions.delete(id),
      });
      await server.connect(transport);
      await transport.handleRequest(req, res, body);
    } catch (error) {
      if (!res.headersSent) res.writeHead(500);
      res.end(String(error));
    }
  });
  await new Promise((resolve) => http.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${http.address().port}/mcp`,
    async close() {
      await Promise.all([...sessions.values()].map((t) => t.close()));
      http.closeAllConnections();
      await new Promise((resolve) => http.close(resolve));
    },
  };
}

const fileSize = (path) => {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
};

async function main() {
  const servers = {};
  const kernels = {};
  const closers = [];
  const sizes = {};
  const tables = {};

  const airlock = async (name, spec) => {
    const notes = createNotesDoor();
    const k = await airlockKernel(spec, {
      doors: [createLedgerDoor(), notes],
      kernelOptions: KERNEL_OPTIONS,
    });
    const http = await airlockHttp(k.kernel);
    // One project the owner approves every notes request for.
    const createProject = notes.http.routes.find(
      (r) => r.method === 'POST' && r.path === 'notes/projects',
    );
    await createProject.handler({
      params: {},
      query: new URLSearchParams(),
      body: { name: 'home' },
      headers: {},
    });
    kernels[name] = { kernel: k.kernel, notes, token: http.token };
    servers[name] = http.url;
    closers.push(async () => {
      await http.close();
      await k.close();
    });
    return k;
  };

  const sq = await airlock('airlock-sqlite');
  sizes['airlock-sqlite'] = async () =>
    ['airlock.db', 'airlock.db-wal'].reduce((n, f) => n + fileSize(join(sq.dir, f)), 0);
  // Where the bytes are: the retained logs (journal, audit, events) against the data itself.
  const statsDb = new Database(join(sq.dir, 'airlock.db'), { readonly: true });
  const pageBytes = statsDb.prepare(
    'SELECT tbl_name AS tbl, SUM(pgsize) AS bytes FROM dbstat JOIN sqlite_schema USING (name) GROUP BY tbl_name',
  );
  tables['airlock-sqlite'] = () => Object.fromEntries(pageBytes.all().map((r) => [r.tbl, r.bytes]));
  closers.push(async () => statsDb.close());

  const rawDb = new Database(join(sq.dir, 'bare.db'));
  rawDb.pragma('journal_mode = WAL');
  rawDb.pragma('synchronous = FULL');
  rawDb.exec('CREATE TABLE IF NOT EXISTS raw (k TEXT PRIMARY KEY, v TEXT NOT NULL)');
  const rawInsert = rawDb.prepare('INSERT INTO raw (k, v) VALUES (?, ?)');
  const bareSqlite = await bareHttp(
    bareFactory(async (a) => rawInsert.run(a.operationID, JSON.stringify(a))),
  );
  servers['bare-sqlite'] = bareSqlite.url;
  closers.unshift(async () => {
    await bareSqlite.close();
    rawDb.close();
  });

  if (PG_URL) {
    const spec = `${PG_URL}${PG_URL.includes('?') ? '&' : '?'}schema=${PG_SCHEMA}`;
    await airlock('airlock-postgres', spec);
    const pool = new pg.Pool({ connectionString: PG_URL, max: 10 });
    await pool.query(
      `CREATE TABLE IF NOT EXISTS "${PG_SCHEMA}".bare_raw (k text PRIMARY KEY, v text NOT NULL)`,
    );
    const barePg = await bareHttp(
      bareFactory((a) =>
        pool.query(`INSERT INTO "${PG_SCHEMA}".bare_raw (k, v) VALUES ($1, $2)`, [
          a.operationID,
          JSON.stringify(a),
        ]),
      ),
    );
    servers['bare-postgres'] = barePg.url;
    sizes['airlock-postgres'] = async () =>
      Number(
        (
          await pool.query(
            `SELECT COALESCE(SUM(pg_total_relation_size(c.oid)), 0) AS n FROM pg_class c
             JOIN pg_namespace s ON s.oid = c.relnamespace WHERE s.nspname = $1 AND c.relkind = 'r'`,
            [PG_SCHEMA],
          )
        ).rows[0].n,
      );
    closers.unshift(async () => {
      await barePg.close();
      await pool.end();
    });
  }

  let agents = 0;
  process.on('message', async (msg) => {
    try {
      if (msg.type === 'agents') {
        const k = kernels[msg.server];
        const tokens = [];
        for (let i = 0; i < msg.count; i++) {
          const added = await k.kernel.principals.addAgent(`load-${agents++}`);
          tokens.push(added.token);
        }
        process.send({ id: msg.id, tokens });
      } else if (msg.type === 'approve') {
        const k = kernels[msg.server];
        let approved = 0;
        const projects = await k.notes.resources('read');
        for (const p of await k.kernel.consent.pending()) {
          const resource =
            p.door === 'notes' ? { id: projects[0].id, name: projects[0].name } : null;
          await k.kernel.consent.approve(p.id, resource);
          approved++;
        }
        process.send({ id: msg.id, approved });
      } else if (msg.type === 'usage') {
        const cpu = process.cpuUsage();
        const dbBytes = msg.server && sizes[msg.server] ? await sizes[msg.server]() : null;
        const tableBytes = msg.server && tables[msg.server] ? tables[msg.server]() : null;
        process.send({
          id: msg.id,
          cpuUs: cpu.user + cpu.system,
          rss: process.memoryUsage().rss,
          heapUsed: process.memoryUsage().heapUsed,
          dbBytes,
          tableBytes,
        });
      } else if (msg.type === 'close') {
        for (const close of closers) await close();
        process.exit(0);
      }
    } catch (error) {
      process.send({ id: msg.id, error: String(error?.stack ?? error) });
    }
  });
  process.send({
    ready: true,
    servers,
    tokens: Object.fromEntries(Object.entries(kernels).map(([k, v]) => [k, v.token])),
  });
}

await main();
