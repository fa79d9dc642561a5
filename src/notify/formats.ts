/**
 * What a webhook receives (authority.md §6). An event becomes one line of
 * text and the link to its card in the web UI; nothing of a call's
 * arguments, preview or any secret goes out, and the link opens the card
 * only after the owner's sign-in — no link decides anything by itself.
 *
 * - `json`: the event (`id`, `event`, `at`, `text`, `link` and the ids of
 *   what it is about), as JSON.
 * - `slack`: a Slack incoming-webhook message: `text` plus Block Kit blocks,
 *   a section and a button (`url`) that opens the card.
 * - `ntfy`: the text as the body, with ntfy's `Title` and `Click` headers.
 */
import type { AirlockEvent } from '../kernel/events/events.js';

export const WEBHOOK_FORMATS = ['json', 'slack', 'ntfy'] as const;
export type WebhookFormat = (typeof WEBHOOK_FORMATS)[number];
/** The events a webhook may ask for; `jobFinished` is delivered for failed jobs only. */
export const NOTIFY_EVENTS = ['approvalRequested', 'jobFinished'] as const;
export type NotifyEventName = (typeof NOTIFY_EVENTS)[number];

/** An event as notifications show it. */
export interface Notice {
  id: number;
  event: NotifyEventName;
  at: number;
  title: string;
  text: string;
  link: string;
  about: Record<string, string | null>;
}

const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);

/**
 * The notice for an event, or null when it is none to notify about.
 * `links` gives the web UI's address of an approval's card and of the jobs.
 */
export function noticeOf(
  id: number,
  at: number,
  data: AirlockEvent,
  links: { approval(id: string): string; jobs(): string },
): Notice | null {
  if (data.event === 'approvalRequested') {
    const a = (data['approval'] ?? {}) as Record<string, unknown>;
    const approvalId = str(a['id']);
    if (!approvalId) return null;
    const agent = str(a['agent']) ?? str(a['connection']) ?? 'a client';
    const door = str(a['door']) ?? 'airlock';
    const tool = str(a['tool']);
    const text = tool
      ? `*${agent}* asks to call \`${tool}\` on *${door}*`
      : `*${agent}* asks for \`${str(a['capability']) ?? 'access'}\` on *${door}*`;
    return {
      id,
      event: 'approvalRequested',
      at,
      title: 'Airlock: approval requested',
      text,
      link: links.approval(approvalId),
      about: {
        approval: approvalId,
        kind: str(a['kind']),
        agent: str(a['agent']),
        door,
        tool,
        capability: str(a['capability']),
        rule: str(a['rule']),
      },
    };
  }
  if (data.event === 'jobFinished' && data['status'] === 'failed') {
    const job = str(data['id']) ?? '?';
    const agent = str(data['agent']);
    return {
      id,
      event: 'jobFinished',
      at,
      title: 'Airlock: job failed',
      text: agent ? `*${agent}*'s job \`${job}\` failed` : `Job \`${job}\` failed`,
      link: links.jobs(),
      about: { job, status: 'failed', agent },
    };
  }
  return null;
}

export interface Rendered {
  headers: Record<string, string>;
  body: string;
}

export function render(notice: Notice, format: WebhookFormat): Rendered {
  if (format === 'slack')
    return {
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        text: `${notice.text}: ${notice.link}`,
        blocks: [
          { type: 'section', text: { type: 'mrkdwn', text: notice.text } },
          {
            type: 'actions',
            elements: [
              {
                type: 'button',
                text: { type: 'plain_text', text: 'Open in Airlock' },
                url: notice.link,
                action_id: 'open',
              },
            ],
          },
        ],
      }),
    };
  if (format === 'ntfy')
    return {
      headers: {
        'content-type': 'text/plain; charset=utf-8',
        Title: notice.title,
        Click: notice.link,
        Markdown: 'yes',
      },
      body: notice.text,
    };
  return {
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      id: notice.id,
      event: notice.event,
      at: notice.at,
      text: notice.text,
      link: notice.link,
      ...notice.about,
    }),
  };
}
