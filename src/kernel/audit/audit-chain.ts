/**
 * The audit trail's hash chain (spec/kernel.md §10, issue 33): every entry
 * carries the hash of the entry before it, so an entry edited, deleted or
 * moved in the store breaks the chain at that place, and `verifyChain` names
 * the first broken entry.
 *
 *   content = SHA-256 of canonical JSON [at, connection, door, tool,
 *             argsDigest, provenance, result, durationMs, decision, rule]
 *   hash    = SHA-256 of `${prevHash}:${id}:${content}` (hex, UTF-8)
 *
 * The first entry follows `GENESIS`; when retention prunes the oldest
 * entries it moves the chain's anchor (the last pruned entry's id and hash)
 * forward, and the oldest kept entry follows the anchor. There is one chain
 * per deployment: every store orders audit appends (SQLite has one writer,
 * PostgreSQL appenders take turns on a lock), and the store computes each
 * hash inside that turn (in SQL on PostgreSQL), so an append reads nothing
 * more than before. Deleting the newest entries is what a chain alone cannot
 * show: signed checkpoints (audit-signing.ts) pin the head.
 */
import { canonicalJson, sha256Hex } from '../digest.js';
import type { AuditEntry, NewAuditEntry } from '../records.js';

/** The hash the first entry of a fresh store follows. */
export const GENESIS = '0'.repeat(64);

/** The chain's anchor: the last entry retention pruned (id 0 and GENESIS before any). */
export interface AuditAnchor {
  id: number;
  hash: string;
  at: number;
}

/** Where the store keeps the anchor and the latest checkpoint (generic records). */
export const CHAIN_COLLECTION = 'auditChain';
export const ANCHOR_KEY = 'anchor';
export const CHECKPOINT_KEY = 'checkpoint';

/** SHA-256 of an entry's content: everything but its id and the chain's hashes. */
export function contentDigest(entry: NewAuditEntry | AuditEntry): string {
  return sha256Hex(
    canonicalJson([
      entry.at,
      entry.connection,
      entry.door,
      entry.tool,
      entry.argsDigest,
      entry.provenance,
      entry.result,
      entry.durationMs,
      entry.decision,
      entry.rule,
    ]),
  );
}

/** The hash of entry `id` with content digest `content`, following `prevHash`. */
export function linkHash(prevHash: string, id: number, content: string): string {
  return sha256Hex(`${prevHash}:${id}:${content}`);
}

/** What `verifyChain` found: intact, or the first entry that breaks the chain and why. */
export type ChainVerdict =
  | { ok: true; count: number; firstId: number | null; lastId: number | null; headHash: string }
  | { ok: false; count: number; brokenId: number; reason: string };

/**
 * Walks `entries` (in id order, as listed) from `prevHash` and returns the
 * first entry that does not follow the one before it or whose hash does not
 * match its content. Feed it page by page through `next`.
 */
export interface ChainWalk {
  next(entries: readonly AuditEntry[]): ChainVerdict | null;
  result(): ChainVerdict;
}

export function walkChain(prevHash: string, previousId: number | null = null): ChainWalk {
  let expected = prevHash;
  let lastId = previousId;
  let firstId: number | null = null;
  let count = 0;
  let broken: ChainVerdict | null = null;
  const after = () => (lastId === null ? 'the start of the chain' : `entry ${lastId}`);
  return {
    next(entries) {
      if (broken) return broken;
      for (const entry of entries) {
        if (entry.hash === null || entry.prevHash === null) {
          broken = {
            ok: false,
            count,
            brokenId: entry.id,
            reason: `entry ${entry.id} has no hash: it was changed, or inserted, outside Airlock`,
          };
          return broken;
        }
        if (entry.prevHash !== expected) {
          broken = {
            ok: false,
            count,
            brokenId: entry.id,
            reason: `entry ${entry.id} does not follow ${after()}: an entry between them was deleted or moved, or one of them was changed`,
          };
          return broken;
        }
        if (linkHash(entry.prevHash, entry.id, contentDigest(entry)) !== entry.hash) {
          broken = {
            ok: false,
            count,
            brokenId: entry.id,
            reason: `entry ${entry.id} was changed after it was written (its content no longer matches its hash)`,
          };
          return broken;
        }
        expected = entry.hash;
        lastId = entry.id;
        firstId ??= entry.id;
        count += 1;
      }
      return null;
    },
    result() {
      return broken ?? { ok: true, count, firstId, lastId, headHash: expected };
    },
  };
}
