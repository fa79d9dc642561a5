/**
 * A clean inbox (spec/authority.md §2): identical pending requests of one
 * agent read as one card with a count — policy asks of the same agent, door,
 * tool and argument digest; consent requests of the same agent, door and
 * capability (a 2025-era client that reconnects asks again from each
 * session). Deciding the card decides every request in it. Pure, so the
 * unit tests check it without a browser.
 */
import type { Approval } from '../../kernel/records.js';

export interface ApprovalGroup {
  /** Stable while the group has members: the card is updated in place, not rebuilt. */
  key: string;
  /** The newest request: its id, connection and preview are the card's. */
  latest: Approval;
  /** Every request in the group, oldest first. */
  ids: string[];
  /** When the first of them was asked. */
  firstAt: number;
}

/** What makes two pending requests the same question; null for requests that never collapse. */
export function sameQuestion(a: Approval): string | null {
  if (a.agent === null) return null;
  const what = a.kind === 'policy' ? [a.tool ?? '', a.digest ?? ''] : [a.capability];
  return JSON.stringify([a.kind, a.agent, a.door, ...what]);
}

/** Groups pending requests (oldest first in, first asked first out). */
export function groupApprovals(approvals: readonly Approval[]): ApprovalGroup[] {
  const groups = new Map<string, ApprovalGroup>();
  for (const a of [...approvals].sort((x, y) => x.createdAt - y.createdAt)) {
    const key = sameQuestion(a) ?? JSON.stringify(['one', a.id]);
    const group = groups.get(key);
    if (group) {
      group.ids.push(a.id);
      group.latest = a;
    } else groups.set(key, { key, latest: a, ids: [a.id], firstAt: a.createdAt });
  }
  return [...groups.values()];
}

/** "asked just now", "asked 4 min ago", "asked 2 h 05 min ago"; with a count, "asked 3 times, first 4 min ago". */
export function askedText(firstAt: number, count: number, now: number): string {
  const ago = agoText(now - firstAt);
  return count > 1 ? `asked ${count} times, first ${ago}` : `asked ${ago}`;
}

function agoText(ms: number): string {
  const min = Math.floor(Math.max(0, ms) / 60_000);
  if (min < 1) return 'just now';
  if (min < 60) return `${min} min ago`;
  return `${Math.floor(min / 60)} h ${String(min % 60).padStart(2, '0')} min ago`;
}
