/**
 * Proving the audit trail was not edited (spec/kernel.md §10, issue 33):
 * signed checkpoints of the chain's head, `verifyStoredChain` (what
 * `airlock audit verify` runs on a store), and signed exports — JSON lines
 * closed by a seal line — that a third party checks with the public key
 * alone (`verifyExport`, `airlock audit verify --file F --public-key K`).
 */
import type { KeyObject } from 'node:crypto';
import {
  ANCHOR_KEY,
  CHAIN_COLLECTION,
  CHECKPOINT_KEY,
  GENESIS,
  walkChain,
  type ChainWalk,
} from './audit-chain.js';
import {
  keyIdOf,
  signStatement,
  statementOf,
  verifyStatement,
  type AnchorStatement,
  type AuditSigner,
  type CheckpointStatement,
  type ExportStatement,
  type Signed,
} from './audit-signing.js';
import { sha256Hex } from '../digest.js';
import { AuditEntrySchema, type AuditEntry } from '../records.js';
import type { Store } from '../store.js';

const PAGE = 1000;

/** A stored anchor: signed when the deployment has a key (unsigned ones are still honoured). */
export type StoredAnchor = AnchorStatement &
  Partial<Pick<Signed<AnchorStatement>, 'keyId' | 'signature'>>;

/** Signs the chain's head now, unless the stored checkpoint already names it. */
export async function writeCheckpoint(
  store: Store,
  signer: AuditSigner,
  now: () => number = Date.now,
): Promise<Signed<CheckpointStatement> | null> {
  const [head] = await store.read((tx) => tx.audit.list({ order: 'desc', limit: 1 }));
  if (!head?.hash) return null;
  return store.transaction(
    async (tx) => {
      const current = await tx.records.get<Signed<CheckpointStatement>>(
        CHAIN_COLLECTION,
        CHECKPOINT_KEY,
      );
      if (current && current.value.headId >= head.id) return current.value;
      const checkpoint = signStatement<CheckpointStatement>(signer, {
        kind: 'airlock.audit.checkpoint/1',
        headId: head.id,
        headHash: head.hash!,
        at: now(),
      });
      await tx.records.put(CHAIN_COLLECTION, CHECKPOINT_KEY, checkpoint);
      return checkpoint;
    },
    { isolation: 'keyed' },
  );
}

/** What a signature check found: valid, made by a key not given, or invalid. */
export type SignatureState = 'valid' | 'unknownKey' | 'invalid' | 'unsigned';

function checkSignature(
  signed: Partial<Pick<Signed<object>, 'keyId' | 'signature'>>,
  keys: readonly KeyObject[],
): SignatureState {
  if (!signed.keyId || !signed.signature) return 'unsigned';
  const key = keys.find((k) => keyIdOf(k) === signed.keyId);
  if (!key) return 'unknownKey';
  const statement = statementOf(signed as Signed<object>);
  return verifyStatement(key, statement, signed.signature) ? 'valid' : 'invalid';
}

export interface ChainReport {
  ok: boolean;
  /** Entries whose links were checked. */
  count: number;
  firstId: number | null;
  lastId: number | null;
  /** Entries written before the chain began (an older Airlock), not covered. */
  unchained: number;
  /** The first entry that breaks the chain, and why (when `ok` is false). */
  brokenId?: number;
  reason?: string;
  anchor?: { id: number; signature: SignatureState };
  checkpoint?: { headId: number; at: number; signature: SignatureState };
}

/**
 * Walks the stored chain (from `fromId` when given, trusting that entry's
 * link to the one before) and checks the anchor and the latest checkpoint
 * against `keys`.
 */
export async function verifyStoredChain(
  store: Store,
  { fromId, keys = [] }: { fromId?: number; keys?: readonly KeyObject[] } = {},
): Promise<ChainReport> {
  const { anchor, checkpoint } = await store.read(async (tx) => ({
    anchor: (await tx.records.get<StoredAnchor>(CHAIN_COLLECTION, ANCHOR_KEY))?.value ?? null,
    checkpoint:
      (await tx.records.get<Signed<CheckpointStatement>>(CHAIN_COLLECTION, CHECKPOINT_KEY))
        ?.value ?? null,
  }));
  const report: ChainReport = { ok: true, count: 0, firstId: null, lastId: null, unchained: 0 };
  const fail = (brokenId: number, reason: string): ChainReport => ({
    ...report,
    ok: false,
    brokenId,
    reason,
  });
  if (anchor) {
    report.anchor = { id: anchor.id, signature: checkSignature(anchor, keys) };
    if (report.anchor.signature === 'invalid')
      return fail(
        anchor.id,
        `the retention anchor (entry ${anchor.id}) was changed: its signature does not verify`,
      );
  }
  if (checkpoint) {
    report.checkpoint = {
      headId: checkpoint.headId,
      at: checkpoint.at,
      signature: checkSignature(checkpoint, keys),
    };
    if (report.checkpoint.signature === 'invalid')
      return fail(
        checkpoint.headId,
        `the checkpoint naming entry ${checkpoint.headId} was changed: its signature does not verify`,
      );
  }

  let afterId = fromId !== undefined ? fromId - 1 : 0;
  let walk: ChainWalk | null = null;
  let checkpointSeen = false;
  for (;;) {
    const page = await store.read((tx) => tx.audit.list({ afterId, limit: PAGE }));
    let entries: AuditEntry[] = page;
    if (!walk) {
      // Entries an older Airlock wrote come first, unlinked; the chain starts after them.
      if (fromId === undefined) {
        const start = entries.findIndex((e) => e.hash !== null);
        report.unchained += start === -1 ? entries.length : start;
        entries = start === -1 ? [] : entries.slice(start);
      }
      const first = entries[0];
      if (first) {
        const start =
          fromId !== undefined
            ? (first.prevHash ?? GENESIS)
            : report.unchained > 0
              ? GENESIS
              : (anchor?.hash ?? GENESIS);
        walk = walkChain(start, fromId !== undefined ? null : (anchor?.id ?? null));
      }
    }
    if (walk) {
      const broken = walk.next(entries);
      if (broken && !broken.ok) return fail(broken.brokenId, broken.reason);
      if (checkpoint) {
        const named = entries.find((e) => e.id === checkpoint.headId);
        if (named) {
          checkpointSeen = true;
          if (named.hash !== checkpoint.headHash)
            return fail(
              named.id,
              `entry ${named.id} differs from the one the checkpoint of ${new Date(checkpoint.at).toISOString()} signed`,
            );
        }
      }
    }
    const last = page[page.length - 1];
    if (!last || page.length < PAGE) break;
    afterId = last.id;
  }
  const result = walk?.result();
  if (result?.ok) {
    report.count = result.count;
    report.firstId = result.firstId;
    report.lastId = result.lastId;
  }
  // The newest entries deleted: the chain alone cannot show it, the checkpoint does.
  const from = fromId ?? (anchor ? anchor.id + 1 : 0);
  if (checkpoint && !checkpointSeen && checkpoint.headId >= from)
    return fail(
      checkpoint.headId,
      `entry ${checkpoint.headId}, the head the checkpoint of ${new Date(checkpoint.at).toISOString()} signed, is missing: entries were deleted`,
    );
  return report;
}

/** The chained entries after `afterId` as JSON lines, closed by a signed seal line. */
export async function exportSigned(
  store: Store,
  signer: AuditSigner,
  { afterId = 0, now = Date.now }: { afterId?: number; now?: () => number } = {},
): Promise<string> {
  const entries: AuditEntry[] = [];
  for (let after = afterId; ;) {
    const page = await store.read((tx) => tx.audit.list({ afterId: after, limit: PAGE }));
    // Entries an older Airlock wrote (unlinked) precede the chain: the export starts after them.
    const start = entries.length > 0 ? 0 : page.findIndex((e) => e.hash !== null);
    if (start !== -1) entries.push(...page.slice(start));
    const last = page[page.length - 1];
    if (!last || page.length < PAGE) break;
    after = last.id;
  }
  const anchor = await store.read((tx) =>
    tx.records.get<StoredAnchor>(CHAIN_COLLECTION, ANCHOR_KEY),
  );
  const lines = entries.map((e) => JSON.stringify(e) + '\n').join('');
  const last = entries[entries.length - 1];
  const seal = signStatement<ExportStatement>(signer, {
    kind: 'airlock.audit.export/1',
    startHash: entries[0]?.prevHash ?? anchor?.value.hash ?? GENESIS,
    headId: last?.id ?? null,
    headHash: last?.hash ?? entries[0]?.prevHash ?? anchor?.value.hash ?? GENESIS,
    count: entries.length,
    linesDigest: sha256Hex(lines),
    at: now(),
  });
  return lines + JSON.stringify({ seal }) + '\n';
}

export interface ExportReport {
  ok: boolean;
  count: number;
  headId: number | null;
  /** The line (1-based) or entry where the export stops being what was signed. */
  brokenLine?: number;
  brokenId?: number;
  reason?: string;
}

/** Checks a signed export with the signer's public key alone. */
export function verifyExport(text: string, publicKey: KeyObject): ExportReport {
  const body = text.endsWith('\n') ? text.slice(0, -1) : text;
  const cut = body.lastIndexOf('\n') + 1;
  const lines = text.slice(0, cut);
  const fail = (reason: string, at: Partial<ExportReport> = {}): ExportReport => ({
    ok: false,
    count: 0,
    headId: null,
    reason,
    ...at,
  });
  let seal: Signed<ExportStatement>;
  try {
    seal = (JSON.parse(body.slice(cut)) as { seal: Signed<ExportStatement> }).seal;
  } catch {
    return fail('the last line is not a seal: this is not a signed export, or it was cut');
  }
  if (seal?.kind !== 'airlock.audit.export/1') return fail('the last line is not an export seal');
  if (seal.keyId !== keyIdOf(publicKey))
    return fail(`the export was signed by key ${seal.keyId}, not by the public key given`);
  if (!verifyStatement(publicKey, statementOf(seal), seal.signature))
    return fail('the seal was changed: its signature does not verify');

  const walk = walkChain(seal.startHash);
  const rows = lines === '' ? [] : lines.slice(0, -1).split('\n');
  for (const [index, line] of rows.entries()) {
    let entry: AuditEntry;
    try {
      entry = AuditEntrySchema.parse(JSON.parse(line));
    } catch {
      return fail(`line ${index + 1} is not an audit entry`, { brokenLine: index + 1 });
    }
    const broken = walk.next([entry]);
    if (broken && !broken.ok)
      return fail(broken.reason, { brokenLine: index + 1, brokenId: broken.brokenId });
  }
  const result = walk.result();
  if (!result.ok) return fail(result.reason, { brokenId: result.brokenId });
  if (result.count !== seal.count || result.headHash !== seal.headHash)
    return fail(
      `the export holds ${result.count} entries, the seal signed ${seal.count}: entries were removed or added`,
    );
  if (sha256Hex(lines) !== seal.linesDigest)
    return fail(
      'the exported lines differ from the signed ones (their digest does not match the seal)',
    );
  return { ok: true, count: result.count, headId: seal.headId };
}
