/**
 * Uploaded bytes on their way from a REST route to its tool (issue 24: one
 * entrance). A tool's arguments are JSON, measured, digested and audited, so
 * a 200 MB upload cannot travel in them: the route holds the bytes here for
 * the length of its `kernel.call` and passes each file's SHA-256 and size
 * instead. The tool takes the bytes by hash, and only while the route holds
 * them; nothing is written before the kernel's stages let the call run.
 */
import { AirlockError, sha256Hex } from '../../../kernel/index.js';

/** What a tool's arguments say of one held file. */
export interface StagedRef {
  sha256: string;
  bytes: number;
}

export interface Staging {
  /** Holds `files` while `run` goes, with the refs that name them. */
  hold<T>(files: readonly Uint8Array[], run: (refs: StagedRef[]) => Promise<T>): Promise<T>;
  /** The held bytes a ref names; `malformedRequest` when none are held (the tool was called without its route). */
  take(ref: StagedRef, route: string): Uint8Array;
}

export function createStaging(): Staging {
  // Hash → bytes and how many calls hold them (two uploads of one file may overlap).
  const held = new Map<string, { bytes: Uint8Array; holders: number }>();
  return {
    async hold(files, run) {
      const refs = files.map((bytes) => {
        const sha256 = sha256Hex(bytes);
        const entry = held.get(sha256);
        if (entry) entry.holders += 1;
        else held.set(sha256, { bytes, holders: 1 });
        return { sha256, bytes: bytes.byteLength };
      });
      try {
        return await run(refs);
      } finally {
        for (const { sha256 } of refs) {
          const entry = held.get(sha256)!;
          entry.holders -= 1;
          if (entry.holders === 0) held.delete(sha256);
        }
      }
    },
    take(ref, route) {
      const entry = held.get(ref.sha256);
      if (!entry || entry.bytes.byteLength !== ref.bytes)
        throw new AirlockError(
          'malformedRequest',
          `No upload with SHA-256 ${ref.sha256} is in progress; send the file with ${route}.`,
        );
      return entry.bytes;
    },
  };
}
