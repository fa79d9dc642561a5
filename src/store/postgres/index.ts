export {
  createPostgresStore,
  type PostgresStore,
  type PostgresStoreOptions,
} from './postgres-store.js';
