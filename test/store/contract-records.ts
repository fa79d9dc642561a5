import { describe, expect, it } from 'vitest';
import { uid, type ContractContext } from './fixtures.js';

const byUtf8 = (a: string, b: string) => Buffer.compare(Buffer.from(a), Buffer.from(b));

export function recordsContract({ store }: ContractContext): void {
  describe('records', () => {
    const putAll = (collection: string, keys: string[]) =>
      store().transaction(async (tx) => {
        for (const key of keys) await tx.records.put(collection, key, { key });
      });
    const keysOf = (collection: string, options?: { prefix?: string; limit?: number }) =>
      store().read(async (tx) => (await tx.records.list(collection, options)).map((r) => r.key));

    it('put then get returns the value with its collection, key and update time', async () => {
      const collection = uid('rec');
      const value = { text: 'héllo ✓', nested: { list: [1, null, 'x'] }, flag: true };
      const before = Date.now();
      await store().transaction((tx) => tx.records.put(collection, 'k1', value));
      const record = await store().read((tx) => tx.records.get(collection, 'k1'));
      expect(record).toEqual({ collection, key: 'k1', value, updatedAt: expect.any(Number) });
      expect(record!.updatedAt).toBeGreaterThanOrEqual(before);
    });

    it('put replaces an existing value', async () => {
      const collection = uid('rec');
      await store().transaction((tx) => tx.records.put(collection, 'k', 1));
      await store().transaction((tx) => tx.records.put(collection, 'k', 2));
      const record = await store().read((tx) => tx.records.get<number>(collection, 'k'));
      expect(record?.value).toBe(2);
    });

    it('get of an unknown key returns null', async () => {
      const record = await store().read((tx) => tx.records.get(uid('rec'), 'missing'));
      expect(record).toBeNull();
    });

    it('list returns only its collection, in byte order of keys', async () => {
      const collection = uid('rec');
      await putAll(collection, ['b', 'a', 'B', 'c', 'a2']);
      await putAll(uid('rec'), ['a0']);
      expect(await keysOf(collection)).toEqual(['B', 'a', 'a2', 'b', 'c']);
    });

    it('list with a prefix returns only keys starting with it, literally', async () => {
      const collection = uid('rec');
      await putAll(collection, ['ab', 'abc', 'ac', 'b', 'a%c', 'a_c', 'a']);
      expect(await keysOf(collection, { prefix: 'ab' })).toEqual(['ab', 'abc']);
      expect(await keysOf(collection, { prefix: 'a%' })).toEqual(['a%c']);
      expect(await keysOf(collection, { prefix: 'a_' })).toEqual(['a_c']);
      expect(await keysOf(collection, { prefix: 'z' })).toEqual([]);
    });

    it('list with a prefix ending in the highest code point keeps every key that starts with it', async () => {
      const collection = uid('rec');
      const top = '\u{10FFFF}';
      await putAll(collection, ['a', `a${top}`, `a${top}z`, `a${top}${top}`, 'b', '\uFFFF', top]);
      expect(await keysOf(collection, { prefix: `a${top}` })).toEqual(
        [`a${top}`, `a${top}${top}`, `a${top}z`].sort(byUtf8),
      );
      expect(await keysOf(collection, { prefix: top })).toEqual([top]);
      expect(await keysOf(collection, { prefix: '\uD7FF' })).toEqual([]);
    });

    it('list with a limit returns the first keys', async () => {
      const collection = uid('rec');
      await putAll(collection, ['d', 'c', 'b', 'a']);
      expect(await keysOf(collection, { limit: 2 })).toEqual(['a', 'b']);
      expect(await keysOf(collection, { prefix: 'c', limit: 5 })).toEqual(['c']);
    });

    it('delete removes a record and reports whether one existed', async () => {
      const collection = uid('rec');
      await putAll(collection, ['k']);
      const first = await store().transaction((tx) => tx.records.delete(collection, 'k'));
      const second = await store().transaction((tx) => tx.records.delete(collection, 'k'));
      expect([first, second]).toEqual([true, false]);
      expect(await store().read((tx) => tx.records.get(collection, 'k'))).toBeNull();
    });
  });
}
