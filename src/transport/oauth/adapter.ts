/**
 * Where the authorization server (`oidc-provider`) keeps what it makes —
 * clients registered dynamically, interactions, authorization codes, grants,
 * access and refresh tokens, its own sessions — in the workspace's store
 * (records collections `oauth.<Model>`), so every instance on one store
 * knows every token (authority.md §7). Expired entries read as absent and
 * are swept now and then.
 *
 * A client ID that is a loopback `http://` URL (a local client's metadata
 * document, CIMD) is fetched here, on loopback deployments only: the
 * library's own CIMD support takes only `https://` IDs and refuses loopback
 * addresses, which is right for every other deployment.
 */
import type { Store } from '../../kernel/store.js';

const collection = (model: string) => `oauth.${model}`;
/** grantId → the `[model, id]`s made under it (revoking a grant ends them all). */
const GRANT_INDEX = 'oauth.grant-index';
/** Session uid → session id. */
const UID_INDEX = 'oauth.uid-index';
/** How often expired entries are swept. */
const SWEEP_MS = 10 * 60 * 1000;

interface Stored {
  payload: Record<string, unknown>;
  /** Epoch ms; null: no expiry (dynamically registered clients). */
  expiresAt: number | null;
}

/** The adapter interface oidc-provider calls (its `Adapter` type, as used here). */
export interface ProviderAdapter {
  upsert(id: string, payload: Record<string, unknown>, expiresIn?: number): Promise<void>;
  find(id: string): Promise<Record<string, unknown> | undefined>;
  findByUserCode(userCode: string): Promise<Record<string, unknown> | undefined>;
  findByUid(uid: string): Promise<Record<string, unknown> | undefined>;
  consume(id: string): Promise<void>;
  destroy(id: string): Promise<void>;
  revokeByGrantId(grantId: string): Promise<void>;
}

export interface AdapterOptions {
  store: Store;
  now?: () => number;
  /** The metadata of a client whose ID is a loopback URL, or undefined (not such an ID, or not allowed here). */
  loopbackClient?: (id: string) => Promise<Record<string, unknown> | undefined>;
}

/** An adapter factory for `new Provider(issuer, { adapter })`. */
export function storeAdapter(options: AdapterOptions): (model: string) => ProviderAdapter {
  const { store } = options;
  const now = options.now ?? Date.now;
  const live = (r: { value: Stored } | null) =>
    r && (r.value.expiresAt === null || r.value.expiresAt > now()) ? r.value.payload : undefined;
  let lastSweep = now();

  const sweep = async () => {
    lastSweep = now();
    await store.transaction(async (tx) => {
      for (const model of ['Session', 'Interaction', 'AuthorizationCode', 'AccessToken']) {
        for (const r of await tx.records.list<Stored>(collection(model)))
          if (r.value.expiresAt !== null && r.value.expiresAt <= now())
            await tx.records.delete(collection(model), r.key);
      }
    });
  };

  return (model) => {
    const name = collection(model);
    const adapter: ProviderAdapter = {
      async upsert(id, payload, expiresIn) {
        const value: Stored = {
          payload,
          expiresAt: expiresIn ? now() + expiresIn * 1000 : null,
        };
        await store.transaction(async (tx) => {
          await tx.records.put(name, id, value);
          const grantId = payload.grantId;
          if (typeof grantId === 'string') {
            const index = await tx.records.get<{ items: [string, string][] }>(GRANT_INDEX, grantId);
            const items = index?.value.items ?? [];
            if (!items.some(([m, i]) => m === model && i === id)) items.push([model, id]);
            await tx.records.put(GRANT_INDEX, grantId, { items });
          }
          if (model === 'Session' && typeof payload.uid === 'string')
            await tx.records.put(UID_INDEX, payload.uid, { id });
        });
        if (now() - lastSweep > SWEEP_MS) void sweep().catch(() => undefined);
      },
      async find(id) {
        const found = live(await store.read((tx) => tx.records.get<Stored>(name, id)));
        if (found || model !== 'Client' || !options.loopbackClient) return found;
        return options.loopbackClient(id);
      },
      findByUserCode: async () => undefined,
      async findByUid(uid) {
        const index = await store.read((tx) => tx.records.get<{ id: string }>(UID_INDEX, uid));
        return index ? adapter.find(index.value.id) : undefined;
      },
      async consume(id) {
        await store.transaction(async (tx) => {
          const found = await tx.records.get<Stored>(name, id);
          if (!found) return;
          const payload = { ...found.value.payload, consumed: Math.floor(now() / 1000) };
          await tx.records.put(name, id, { ...found.value, payload });
        });
      },
      async destroy(id) {
        await store.transaction((tx) => tx.records.delete(name, id));
      },
      async revokeByGrantId(grantId) {
        await store.transaction(async (tx) => {
          const index = await tx.records.get<{ items: [string, string][] }>(GRANT_INDEX, grantId);
          for (const [m, i] of index?.value.items ?? []) await tx.records.delete(collection(m), i);
          await tx.records.delete(GRANT_INDEX, grantId);
          await tx.records.delete(collection('Grant'), grantId);
        });
      },
    };
    return adapter;
  };
}

/** How many access and refresh tokens made under these grants are still good. */
export async function liveTokens(store: Store, grantIds: readonly string[], now = Date.now()) {
  return store.read(async (tx) => {
    let count = 0;
    for (const grantId of grantIds) {
      const index = await tx.records.get<{ items: [string, string][] }>(GRANT_INDEX, grantId);
      for (const [model, id] of index?.value.items ?? []) {
        if (model !== 'AccessToken' && model !== 'RefreshToken') continue;
        const found = await tx.records.get<Stored>(collection(model), id);
        const payload = found?.value.payload;
        if (
          found &&
          (found.value.expiresAt === null || found.value.expiresAt > now) &&
          !payload?.consumed
        )
          count++;
      }
    }
    return count;
  });
}
