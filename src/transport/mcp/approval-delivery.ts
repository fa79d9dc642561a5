/**
 * Delivering an approval request to where the owner decides it
 * (spec/authority.md §2). A call answering `approvalRequired` is offered to
 * a client that declared URL-mode elicitation as a link to the approval in
 * the web UI — never as a form the client could answer itself:
 *
 * - 2025-era session: a URL elicitation (`elicitationId` = the approval id);
 *   the call then waits, bounded, for the owner's decision and runs again.
 * - 2026-07-28 era: an `input_required` result with the URL request and a
 *   `requestState` sealed with an HMAC key kept in the store, so the retry
 *   may reach any instance; the retry runs the call again.
 *
 * Either way the kernel decides on the retry: the grant exists only if the
 * owner approved. A client with neither gets plain `approvalRequired`.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Kernel } from '../../kernel/kernel.js';
import type { Failure } from '../../kernel/errors.js';

/**
 * How long a 2025-era call waits for the owner after the link was shown:
 * below 60 s, the request timeout of the v1 SDK and most clients, so the
 * call answers (with the link) before the client gives up on it.
 */
export const APPROVAL_WAIT_MS = 45_000;
/** The longest wait `approvals.waitSeconds` may set. */
export const MAX_APPROVAL_WAIT_MS = 55_000;
const STATE_TTL_MS = 15 * 60 * 1000;
const PREFIX = 'apr1.';
const KEY_COLLECTION = 'secrets';
const KEY_NAME = 'request-state-key';

export interface ApprovalState {
  approvalId: string;
  agent: string;
  tool: string;
}

/** The approval a failure asks for, when it is an `approvalRequired` one. */
export function pendingApproval(outcome: Failure): string | null {
  const id = outcome.data?.['approvalID'];
  return outcome.code === 'approvalRequired' && typeof id === 'string' ? id : null;
}

/** The web UI's page for one approval. */
export const approvalUrl = (origin: string, approvalId: string) =>
  `${origin}/#/approvals/${encodeURIComponent(approvalId)}`;

/**
 * An `approvalRequired` failure with the card's link (issue 36): `approvalUrl`
 * in its data and the link in its sentence, so every client — with or
 * without URL elicitation — can show the owner's card. The link carries no
 * secret: opening it needs the owner's sign-in. Without a reachable inbox,
 * `noInbox` says how the owner can answer instead.
 */
export async function withApprovalLink(
  outcome: Failure,
  link: ((approvalId: string) => Promise<string | undefined>) | undefined,
  noInbox?: string,
): Promise<Failure> {
  const id = pendingApproval(outcome);
  if (!id) return outcome;
  const url = link ? await link(id).catch(() => undefined) : undefined;
  if (!url) return noInbox ? { ...outcome, message: `${outcome.message} ${noInbox}` } : outcome;
  const said = `request ${id}`;
  const message = outcome.message.includes(`${said} in the Airlock inbox`)
    ? outcome.message.replace(`${said} in the Airlock inbox`, `${said} at ${url}`)
    : outcome.message.includes(said)
      ? outcome.message.replace(said, `${said} at ${url}`)
      : `${outcome.message} The owner approves it at ${url}.`;
  return { ...outcome, message, data: { ...outcome.data, approvalUrl: url } };
}

export const approvalMessage = (approvalId: string) =>
  `The owner must approve request ${approvalId} in the Airlock inbox; open the link to show it to them. Only the owner's decision there counts.`;

export const isApprovalState = (state: unknown): state is string =>
  typeof state === 'string' && state.startsWith(PREFIX);

/** Seals and opens approval `requestState`s with a key every instance on the store shares. */
export function createApprovalStateSeal(kernel: Pick<Kernel, 'store'>) {
  let key: Promise<Buffer> | undefined;
  const keyOf = () =>
    (key ??= kernel.store
      .transaction(async (tx) => {
        const found = await tx.records.get<{ key: string }>(KEY_COLLECTION, KEY_NAME);
        if (found) return found.value.key;
        const made = randomBytes(32).toString('base64url');
        await tx.records.put(KEY_COLLECTION, KEY_NAME, { key: made });
        return made;
      })
      .then((k) => Buffer.from(k, 'base64url')));
  const mac = async (body: string) =>
    createHmac('sha256', await keyOf())
      .update(body)
      .digest();

  return {
    async seal(state: ApprovalState): Promise<string> {
      const body = Buffer.from(
        JSON.stringify({ ...state, exp: Date.now() + STATE_TTL_MS }),
      ).toString('base64url');
      return `${PREFIX}${body}.${(await mac(body)).toString('base64url')}`;
    },
    /** The state, or null when forged, altered, expired, or minted for another agent or tool. */
    async open(
      raw: string,
      expected: { agent: string; tool: string },
    ): Promise<ApprovalState | null> {
      const [body, tag, extra] = raw.slice(PREFIX.length).split('.');
      if (!body || !tag || extra !== undefined) return null;
      const given = Buffer.from(tag, 'base64url');
      const wanted = await mac(body);
      if (given.length !== wanted.length || !timingSafeEqual(given, wanted)) return null;
      let parsed: ApprovalState & { exp?: unknown };
      try {
        parsed = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as typeof parsed;
      } catch {
        return null;
      }
      if (typeof parsed.exp !== 'number' || parsed.exp < Date.now()) return null;
      if (parsed.agent !== expected.agent || parsed.tool !== expected.tool) return null;
      return { approvalId: parsed.approvalId, agent: parsed.agent, tool: parsed.tool };
    },
  };
}

export type ApprovalStateSeal = ReturnType<typeof createApprovalStateSeal>;

/** Resolves once the approval is decided (or `ms` pass): true when it was decided in time. */
export function decided(
  kernel: Pick<Kernel, 'events' | 'store'>,
  approvalId: string,
  ms: number,
  signal?: AbortSignal,
) {
  return new Promise<boolean>((resolve) => {
    let done = false;
    const finish = (value: boolean) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      unsubscribe();
      // A task's runner waits in rounds of a second on one signal for as long as the owner takes.
      signal?.removeEventListener('abort', aborted);
      resolve(value);
    };
    const aborted = () => finish(false);
    const timer = setTimeout(() => finish(false), ms);
    signal?.addEventListener('abort', aborted, { once: true });
    const unsubscribe = kernel.events.subscribe(
      ({ data }) => {
        const approval = data.approval as { id?: unknown } | undefined;
        if (data.event === 'approvalDecided' && approval?.id === approvalId) finish(true);
      },
      { events: ['approvalDecided'] },
    );
    // Decided before we listened (another instance, or the owner was quick).
    void kernel.store
      .read((tx) => tx.approvals.get(approvalId))
      .then((a) => {
        if (a && a.status !== 'pending') finish(true);
      })
      .catch(() => undefined);
  });
}
