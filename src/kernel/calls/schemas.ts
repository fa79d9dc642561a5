/**
 * Schema building blocks doors share: UTF-8 byte lengths, UUIDs, 64-hex
 * digests. Byte limits count UTF-8 bytes, not characters (spec/kernel.md §1).
 */
import { z } from 'zod';
import { utf8Bytes } from '../digest.js';

/** A string whose UTF-8 encoding is between `min` and `max` bytes. */
export function utf8String(min: number, max: number) {
  return z.string().superRefine((value, ctx) => {
    const bytes = utf8Bytes(value);
    if (bytes < min || bytes > max) {
      ctx.addIssue({
        code: 'custom',
        message: `must be ${min === 0 ? `at most ${max}` : `${min} to ${max}`} UTF-8 bytes (got ${bytes})`,
      });
    }
  });
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export const uuidString = () =>
  z
    .string()
    .regex(UUID, { message: 'must be a UUID such as 123e4567-e89b-12d3-a456-426614174000' });

export const hex64String = () =>
  z
    .string()
    .regex(/^[0-9a-f]{64}$/, { message: 'must be 64 lowercase hex characters (a SHA-256 digest)' });
