/**
 * `notes-scaling` (issue #16): the notes door's costs should follow the
 * request, not the data.
 *
 * - list: `rooqi_list_approved_documents` on a project of one small document,
 *   first with nothing elsewhere (the baseline), then with another project
 *   holding BENCH_NOTES_ELSEWHERE_MB (20) of text in 5 MB documents.
 * - append: `rooqi_append_text` (100 bytes) to documents of 1 KB (the
 *   baseline), 100 KB, 1 MB and 5 MB, interleaved in rounds.
 *
 * In process through `kernel.call` (the door's own path, without HTTP), on
 * SQLite and on PostgreSQL when reachable. Documents are filled through the
 * owner's REST route (1 MB blocks).
 */
import { randomUUID } from 'node:crypto';
import { URLSearchParams } from 'node:url';
import { connection } from '../dist/kernel/connection.js';
import { createNotesDoor } from '../dist/doors/notes/index.js';
import { createRouter } from '../dist/transport/router.js';
import { airlockKernel } from './servers.mjs';

const MB = 1_000_000;
const prov = { provider: 'bench', model: 'bench', promptVersion: '1' };

async function notesTarget(name, storeSpec) {
  const door = createNotesDoor();
  const k = await airlockKernel(storeSpec, { doors: [door] });
  const router = createRouter();
  for (const route of door.http.routes) router.add(route);
  const rest = async (method, path, body) => {
    const m = router.match(method, path);
    const answer = await m.route.handler({
      params: m.params,
      query: new URLSearchParams(),
      body,
      headers: {},
    });
    if (answer.ok === false) throw new Error(`${method} ${path}: ${JSON.stringify(answer)}`);
    return answer.body;
  };
  const conn = connection('bench:notes', 'internal');
  const call = async (tool, args) => {
    const out = await k.kernel.call('notes', tool, args, { connection: conn });
    if (out.ok !== true) throw new Error(`${name} ${tool}: ${JSON.stringify(out).slice(0, 300)}`);
    return out.value;
  };
  const project = async (pname) =>
    (await rest('POST', 'notes/projects', { name: pname })).projectID;
  const documentIn = async (projectID) =>
    (await rest('POST', 'notes/documents', { projectID, title: 'bench' })).documentID;
  const fill = async (documentID, bytes) => {
    for (let left = bytes; left > 0; left -= MB)
      await rest('POST', `notes/documents/${documentID}/blocks`, {
        text: 'n'.repeat(Math.min(MB, left)),
      });
  };
  const home = await project('home');
  for (const [capability, tool] of [
    ['read', 'rooqi_request_read_access'],
    ['write', 'rooqi_request_write_access'],
  ]) {
    await k.kernel.call('notes', tool, {}, { connection: conn });
    const pending = (await k.kernel.consent.pending()).find(
      (p) => p.connection === conn.id && p.capability === capability,
    );
    await k.kernel.consent.approve(pending.id, { id: home, name: 'home' });
  }
  return { name, k, rest, call, project, documentIn, fill, home };
}

const timedNs = async (fn) => {
  const t = process.hrtime.bigint();
  await fn();
  return Number(process.hrtime.bigint() - t);
};
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
};
const ms = (ns) => Math.round(ns / 1e4) / 100;

async function measureList(t, n) {
  const out = [];
  for (let i = 0; i < n; i++)
    out.push(await timedNs(() => t.call('rooqi_list_approved_documents', {})));
  return median(out);
}

async function benchTarget(t, { elsewhereMb, samples }) {
  const rows = [];
  // list: one small document at home; then 20 MB in another project.
  const small = await t.documentIn(t.home);
  await t.fill(small, 1000);
  await measureList(t, 20);
  const listBase = await measureList(t, samples);
  const other = await t.project('elsewhere');
  for (let left = elsewhereMb; left > 0; left -= 5) {
    const doc = await t.documentIn(other);
    await t.fill(doc, Math.min(5, left) * MB);
  }
  const listBig = await measureList(t, samples);
  rows.push({ store: t.name, measure: 'list, nothing elsewhere', ms: ms(listBase), ratio: 1 });
  rows.push({
    store: t.name,
    measure: `list, ${elsewhereMb} MB elsewhere`,
    ms: ms(listBig),
    ratio: Math.round((listBig / listBase) * 100) / 100,
  });

  // append: documents of growing size, interleaved.
  const sizes = [
    ['1 KB', 1000],
    ['100 KB', 100_000],
    ['1 MB', MB],
    ['5 MB', 5 * MB],
  ];
  const docs = [];
  for (const [label, bytes] of sizes) {
    const id = await t.documentIn(t.home);
    await t.fill(id, bytes);
    const revision = bytes <= MB ? 1 : Math.ceil(bytes / MB);
    docs.push({ label, id, revision, ns: [] });
  }
  const appendOnce = async (d) => {
    const receipt = await t.call('rooqi_append_text', {
      operationID: randomUUID(),
      documentID: d.id,
      text: 'a'.repeat(100),
      expectedVersion: d.revision,
      ...prov,
    });
    d.revision = receipt.committedRevision;
  };
  for (const d of docs) await appendOnce(d); // warm-up
  for (let r = 0; r < samples; r++)
    for (let i = 0; i < docs.length; i++) {
      const d = docs[(r + i) % docs.length];
      d.ns.push(await timedNs(() => appendOnce(d)));
    }
  const base = median(docs[0].ns);
  for (const d of docs)
    rows.push({
      store: t.name,
      measure: `append 100 B to a ${d.label} document`,
      ms: ms(median(d.ns)),
      ratio: Math.round((median(d.ns) / base) * 100) / 100,
    });
  return rows;
}

export async function benchNotesScaling({ pg: pgState, samples = 30 }) {
  const elsewhereMb = Number(process.env.BENCH_NOTES_ELSEWHERE_MB ?? 20);
  const rows = [];
  const specs = [['sqlite', undefined]];
  if (pgState.ok)
    specs.push([
      'postgres',
      `${pgState.url}${pgState.url.includes('?') ? '&' : '?'}schema=${pgState.schema}_notes`,
    ]);
  for (const [name, spec] of specs) {
    const t = await notesTarget(name, spec);
    try {
      rows.push(...(await benchTarget(t, { elsewhereMb, samples })));
    } finally {
      await t.k.close();
    }
  }
  return { samples, elsewhereMb, rows };
}

export function printNotesScaling(result, table) {
  console.log(
    `notes-scaling: median of ${result.samples} calls (kernel.call); ratio against the first row of each group\n`,
  );
  console.log(
    table(
      ['store', 'measure', 'median ms', 'ratio'],
      result.rows.map((r) => [r.store, r.measure, r.ms, r.ratio]),
    ),
  );
  console.log('');
}
