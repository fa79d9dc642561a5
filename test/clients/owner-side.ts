/**
 * The owner's side of the client suites (clients.test.ts on Node 20,
 * clients-node22.test.ts on Node 22): the rules both serve under, the card
 * an ask's text links, approving it once over REST, and counting the
 * approved call's runs in the audit.
 */
import { expect } from 'vitest';
import type { Served } from '../helpers/servers.js';

/** The owner's rules, written with the exact names: a portable-name call must meet them too. */
export const CLIENT_RULES = [
  { tool: 'ledger_echo', decision: 'ask' },
  { tool: 'koharu.list_engines', decision: 'deny' },
];

export function ownerSide(served: () => Served) {
  const owner = () => ({ authorization: `Bearer ${served().ownerToken}` });
  return {
    /** The card's id in the link the ask's text carries (the error's data or its message). */
    askedId(asked: string): string {
      expect(asked).toContain('approvalRequired');
      const url = /(https?:\/\/[^\s"\\]+\/#\/approvals\/[^\s"\\,.)]+)/.exec(asked)?.[1];
      expect(url, asked).toContain(`${served().url}/#/approvals/`);
      return decodeURIComponent(url!.split('/').pop()!);
    },

    async approveOnce(id: string): Promise<void> {
      const approved = await fetch(`${served().url}/api/v1/approvals/${id}/approve`, {
        method: 'POST',
        headers: { ...owner(), 'content-type': 'application/json' },
        body: JSON.stringify({ scope: 'once' }),
      });
      expect(approved.status).toBe(200);
    },

    /** The audit's last id, and the `ledger_echo` calls that ran (`ok`) after an id. */
    async auditAfter(afterId: number) {
      const res = await fetch(
        `${served().url}/api/v1/audit?door=ledger&afterId=${afterId}&limit=10000`,
        { headers: owner() },
      );
      const entries = (
        (await res.json()) as { entries: { id: number; tool: string; result: string }[] }
      ).entries;
      return {
        last: entries.reduce((max, e) => Math.max(max, e.id), afterId),
        echoes: entries.filter((e) => e.tool === 'ledger_echo' && e.result === 'ok').length,
      };
    },
  };
}
