/**
 * `airlock audit verify|export|public-key` (spec/kernel.md §10, issue 33):
 * walk the audit trail's hash chain in the store and report the first
 * broken entry; write a signed export; check a signed export with the
 * public key alone. They read the store directly (`--data`, `--store`).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import {
  exportSigned,
  verifyExport,
  verifyStoredChain,
  type ChainReport,
} from '../../kernel/audit/audit-seal.js';
import { openStore } from '../../store/open.js';
import { intOption, parse, UsageError } from '../args.js';
import { folderPublicKey, loadAuditSigner, readPublicKey } from '../workspace/audit-key.js';

export const AUDIT_HELP = `Usage:
  airlock audit verify [--from ID]     walk the audit chain in the store; exit 1 naming the
                                       first broken entry (edited, deleted or moved)
  airlock audit verify --file F --public-key K
                                       check a signed export with the public key alone
  airlock audit export --signed [-o FILE] [--after ID]
                                       the chain as JSON lines closed by a signed seal line
  airlock audit public-key             print the public key (PEM) that verifies this folder's
                                       checkpoints and exports: give it to your auditor

Options: --data DIR (default ./.airlock; holds audit-signing.key), --store URL (postgres://…),
  --public-key K (a PEM file; also checks the store's checkpoints), -h/--help`;

const OPTIONS = {
  data: { type: 'string' },
  store: { type: 'string' },
  from: { type: 'string' },
  after: { type: 'string' },
  file: { type: 'string' },
  'public-key': { type: 'string', multiple: true },
  signed: { type: 'boolean' },
  output: { type: 'string', short: 'o' },
  help: { type: 'boolean', short: 'h' },
} as const;

const MAX_ID = Number.MAX_SAFE_INTEGER;

function describe(report: ChainReport): string {
  const parts = [
    report.count === 0
      ? 'the audit chain is intact (no chained entries)'
      : `the audit chain is intact: ${report.count} entries, ${report.firstId} to ${report.lastId}`,
  ];
  if (report.unchained > 0)
    parts.push(`${report.unchained} older entries precede the chain and are not covered`);
  if (report.checkpoint)
    parts.push(
      `checkpoint of ${new Date(report.checkpoint.at).toISOString()} at entry ${report.checkpoint.headId}: signature ${report.checkpoint.signature}`,
    );
  if (report.anchor)
    parts.push(
      `anchored after pruned entry ${report.anchor.id}: signature ${report.anchor.signature}`,
    );
  return parts.join('; ');
}

export async function auditCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parse({ args: argv, allowPositionals: true, options: OPTIONS });
  const [sub, ...extra] = positionals;
  if (values.help || !sub) {
    process.stdout.write(AUDIT_HELP + '\n');
    return values.help ? 0 : 2;
  }
  if (extra.length) throw new UsageError(`audit: unexpected argument '${extra[0]}'`);
  const data = resolve(values.data ?? './.airlock');
  const keys = (values['public-key'] ?? []).map((path) => {
    try {
      return readPublicKey(path);
    } catch (error) {
      throw new UsageError(
        `--public-key: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
  });
  switch (sub) {
    case 'verify': {
      if (values.file !== undefined) {
        const [key] = keys;
        if (!key || keys.length > 1)
          throw new UsageError(
            'audit verify --file: give the signer’s key with one --public-key K',
          );
        const report = verifyExport(readFileSync(values.file, 'utf8'), key);
        if (!report.ok) {
          const where = report.brokenLine ? ` (line ${report.brokenLine})` : '';
          process.stdout.write(`audit export NOT verified${where}: ${report.reason}\n`);
          return 1;
        }
        process.stdout.write(
          `audit export verified: ${report.count} entries${report.headId !== null ? ` through entry ${report.headId}` : ''}, signed by the key given\n`,
        );
        return 0;
      }
      const fromId =
        values.from === undefined ? undefined : intOption('from', values.from, 1, 1, MAX_ID);
      const own = folderPublicKey(data);
      const report = await withStore(data, values.store, (store) =>
        verifyStoredChain(store, {
          ...(fromId ? { fromId } : {}),
          keys: own ? [own, ...keys] : keys,
        }),
      );
      if (!report.ok) {
        process.stdout.write(`audit chain BROKEN at entry ${report.brokenId}: ${report.reason}\n`);
        return 1;
      }
      process.stdout.write(describe(report) + '\n');
      return 0;
    }
    case 'export': {
      if (!values.signed)
        throw new UsageError(
          'audit export: pass --signed (GET /api/v1/audit?format=jsonl exports unsigned)',
        );
      const afterId = intOption('after', values.after, 0, 0, MAX_ID);
      const signer = loadAuditSigner(data);
      const text = await withStore(data, values.store, (store) =>
        exportSigned(store, signer, { afterId }),
      );
      if (values.output) writeFileSync(values.output, text, { mode: 0o600 });
      else process.stdout.write(text);
      return 0;
    }
    case 'public-key':
      process.stdout.write(loadAuditSigner(data).publicKeyPem);
      return 0;
    default:
      throw new UsageError(`audit: unknown subcommand '${sub}'; run 'airlock audit --help'`);
  }
}

async function withStore<T>(
  data: string,
  store: string | undefined,
  fn: (store: Awaited<ReturnType<typeof openStore>>['store']) => Promise<T>,
): Promise<T> {
  const opened = await openStore({ data, ...(store ? { store } : {}) });
  try {
    return await fn(opened.store);
  } finally {
    await opened.store.close();
  }
}
