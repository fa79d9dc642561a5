/**
 * `notes-scaling` (issue #16): the notes door's costs should follow the
 * request, not the data.
 *
 * - list: `rooqi_list_approved_documents` on a project of one small document,
 *   in a store with nothing elsewhere (the baseline) and in a second store
 *   of the same kind where another project holds BENCH_NOTES_ELSEWHERE_MB
 *   (20) of text in 5 MB documents; the two are called in alternating
 *   rounds, so machine noise hits both alike (a call is ~0.1 ms).
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
import { createRouter } from '../dist/transport/http/router.js';
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

const LIST_ROUNDS = 20;
const LIST_PER_ROUND = 20;

/** Median list time in `base` and in `big`, called in alternating rounds. */
async function measureLists(base, big) {
  const list = (t) => t.call('rooqi_list_approved_documents', {});
  for (let i = 0; i < LIST_PER_ROUND; i++) await Promise.all([list(base), list(big)]); // warm-up
  const ns = new Map([
    [base, []],
    [big, []],
  ]);
  for (let r = 0; r < LIST_ROUNDS; r++)
    for (const t of r % 2 ? [big, base] : [base, big])
      for (let i = 0; i < LIST_PER_ROUND; i++) ns.get(t).push(await timedNs(() => list(t)));
  return { listBase: median(ns.get(base)), listBig: median(ns.get(big)) };
}

async function benchTarget(t, base, { elsewhereMb, samples }) {
  const rows = [];
  // list: one small document at home in both stores; 20 MB in another project of `t`.
  for (const s of [base, t]) await s.fill(await s.documentIn(s.home), 1000);
  const other = await t.project('elsewhere');
  for (let left = elsewhereMb; left > 0; left -= 5) {
    const doc = await t.documentIn(other);
    await t.fill(doc, Math.min(5, left) * MB);
  }
  const { listBase, listBig } = await measureLists(base, t);
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
  const firstNs = median(docs[0].ns);
  for (const d of docs)
    rows.push({
      store: t.name,
      measure: `append 100 B to a ${d.label} document`,
      ms: ms(median(d.ns)),
      ratio: Math.round((median(d.ns) / firstNs) * 100) / 100,
    });
  return rows;
}

export async function benchNotesScaling({ pg: pgState, samples = 30 }) {
  const elsewhereMb = Number(process.env.BENCH_NOTES_ELSEWHERE_MB ?? 20);
  const rows = [];
  const pgSpec = (suffix) =>
    `${pgState.url}${pgState.url.includes('?') ? '&' : '?'}schema=${pgState.schema}${suffix}`;
  const specs = [['sqlite', undefined, undefined]];
  if (pgState.ok) specs.push(['postgres', pgSpec('_notes'), pgSpec('_notes_base')]);
  for (const [name, spec, baseSpec] of specs) {
    const t = await notesTarget(name, spec);
    const base = await notesTarget(name, baseSpec);
    try {
      rows.push(...(await benchTarget(t, base, { elsewhereMb, samples })));
    } finally {
      await base.k.close();
      await t.k.close();
    }
  }
  return { samples, elsewhereMb, rows };
}

export function printNotesScaling(result, table) {
  console.log(
    `notes-scaling: median of ${LIST_ROUNDS * LIST_PER_ROUND} list and ${result.samples} append calls (kernel.call); ratio against the first row of each group\n`,
  );
  console.log(
    table(
      ['store', 'measure', 'median ms', 'ratio'],
      result.rows.map((r) => [r.store, r.measure, r.ms, r.ratio]),
    ),
  );
  console.log('');
}
