/**
 * Email for the owner (authority.md §6, issue 30): `notify.smtp` sends each
 * notice — the same words and link as a push, never an argument, preview or
 * secret — to its recipients through an SMTP server (nodemailer). A
 * temporary failure (a 4xx reply, a lost connection, a timeout) is retried
 * like a webhook's 5xx; a permanent one (5xx) fails the delivery at once.
 */
import type { Transporter } from 'nodemailer';
import type { Notice } from './formats.js';
import { DELIVERY_TIMEOUT_MS, Retryable, type DestinationSource } from './webhooks.js';

export interface SmtpConfig {
  host: string;
  /** Default 587 (465 when `secure`). */
  port?: number | undefined;
  /** TLS from the start (port 465); otherwise STARTTLS when the server offers it. */
  secure?: boolean | undefined;
  user?: string | undefined;
  pass?: string | undefined;
  from: string;
  to: string[];
}

/** The message of a notice: its title, its line without markup, and the card's link. */
export function emailOf(notice: Notice): { subject: string; text: string } {
  return {
    subject: notice.title,
    text: `${notice.text.replace(/[*`]/g, '')}.\n\nOpen it in Airlock (sign-in needed): ${notice.link}\n`,
  };
}

export function emailSource(smtp: SmtpConfig, timeoutMs = DELIVERY_TIMEOUT_MS): DestinationSource {
  // nodemailer is loaded with the first e-mail, not at start-up.
  let transport: Promise<Transporter> | undefined;
  const transporter = () =>
    (transport ??= import('nodemailer').then(({ default: nodemailer }) =>
      nodemailer.createTransport({
        host: smtp.host,
        port: smtp.port ?? (smtp.secure ? 465 : 587),
        secure: smtp.secure ?? false,
        ...(smtp.user ? { auth: { user: smtp.user, pass: smtp.pass ?? '' } } : {}),
        connectionTimeout: timeoutMs,
        greetingTimeout: timeoutMs,
        socketTimeout: timeoutMs,
      }),
    ));
  const destination = {
    id: 'email',
    label: smtp.to.join(', '),
    format: 'email' as const,
    person: true,
    async send(notice: Notice) {
      try {
        await (await transporter()).sendMail({ from: smtp.from, to: smtp.to, ...emailOf(notice) });
      } catch (error) {
        const e = error as Error & { responseCode?: number };
        const message = e.responseCode ? `SMTP ${e.responseCode}: ${e.message}` : e.message;
        if (e.responseCode !== undefined && e.responseCode >= 500)
          throw new Error(message, { cause: error });
        throw new Retryable(message, { cause: error });
      }
    },
  };
  return () => [destination];
}
