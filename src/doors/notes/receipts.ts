/**
 * Write receipts (spec/notes.md "Receipt"): `ownerProofSHA256` is
 * HMAC-SHA256 over the canonical JSON of `{operationID, documentID,
 * committedRevision}` keyed by a secret only this workspace holds. The secret
 * is generated once and kept in the workspace's store (so every instance of a
 * scale-out workspace signs alike); it never appears in results or logs.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';
import { canonicalJson, type Store } from '../../kernel/index.js';
import { OWNER, type Receipt } from './documents.js';

const SECRET_KEY = 'receiptSecret';

export interface ReceiptSigner {
  sign(fields: Omit<Receipt, 'ownerProofSHA256'>): Receipt;
  verify(receipt: unknown): boolean;
}

/** Loads the workspace's receipt secret, creating it on first use. */
export async function loadReceiptSigner(store: Store): Promise<ReceiptSigner> {
  const secretHex = await store.transaction(async (tx) => {
    const existing = await tx.records.get<{ hex: string }>(OWNER, SECRET_KEY);
    if (existing) return existing.value.hex;
    const hex = randomBytes(32).toString('hex');
    await tx.records.put(OWNER, SECRET_KEY, { hex });
    return hex;
  });
  return createReceiptSigner(Buffer.from(secretHex, 'hex'));
}

const ReceiptShape = z
  .object({
    operationID: z.string(),
    documentID: z.string(),
    committedRevision: z.number().int().min(0),
    ownerProofSHA256: z.string().regex(/^[0-9a-f]{64}$/),
  })
  .strict();

export function createReceiptSigner(secret: Buffer): ReceiptSigner {
  const proof = (f: Omit<Receipt, 'ownerProofSHA256'>) =>
    createHmac('sha256', secret)
      .update(
        canonicalJson({
          committedRevision: f.committedRevision,
          documentID: f.documentID,
          operationID: f.operationID,
        }),
      )
      .digest('hex');
  return {
    sign: (f) => ({
      operationID: f.operationID,
      documentID: f.documentID,
      committedRevision: f.committedRevision,
      ownerProofSHA256: proof(f),
    }),
    verify(receipt) {
      const parsed = ReceiptShape.safeParse(receipt);
      if (!parsed.success) return false;
      const expected = Buffer.from(proof(parsed.data), 'hex');
      return timingSafeEqual(expected, Buffer.from(parsed.data.ownerProofSHA256, 'hex'));
    },
  };
}
