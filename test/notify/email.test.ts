/**
 * Email (authority.md §6, issue 30) through nodemailer to an SMTP double on
 * loopback. No maintained SMTP server package is installed (`smtp-server` is
 * not in node_modules), so the double below speaks the few commands of RFC
 * 5321 a plain submission needs and keeps each message it accepts.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStore } from '../../src/store/open.js';
import { createEventBus, type EventBus } from '../../src/kernel/events/events.js';
import { silentLogger } from '../../src/kernel/logger.js';
import type { Store } from '../../src/kernel/store.js';
import { listDeliveries, startNotifier } from '../../src/notify/webhooks.js';
import { emailSource } from '../../src/notify/email.js';
import { ConfigFileSchema } from '../../src/cli/config/config-check.js';
import { waitFor } from '../helpers/wait.js';

interface Mail {
  from: string;
  to: string[];
  data: string;
}

/** An SMTP server on loopback; `rcptReplies` answers the next RCPT TOs (then 250). */
async function smtpDouble(rcptReplies: string[] = []) {
  const mails: Mail[] = [];
  const server: Server = createServer((socket: Socket) => {
    let buffer = '';
    let inData = false;
    let mail: Mail = { from: '', to: [], data: '' };
    const say = (line: string) => socket.write(`${line}\r\n`);
    say('220 double ESMTP');
    socket.on('data', (chunk: Buffer) => {
      buffer += chunk.toString('utf8');
      for (;;) {
        if (inData) {
          const end = buffer.indexOf('\r\n.\r\n');
          if (end < 0) return;
          mail.data = buffer.slice(0, end).replace(/^\.\./gm, '.');
          buffer = buffer.slice(end + 5);
          inData = false;
          mails.push(mail);
          mail = { from: '', to: [], data: '' };
          say('250 queued');
          continue;
        }
        const nl = buffer.indexOf('\r\n');
        if (nl < 0) return;
        const line = buffer.slice(0, nl);
        buffer = buffer.slice(nl + 2);
        const verb = line.slice(0, 4).toUpperCase();
        if (verb === 'MAIL') mail.from = line;
        if (verb === 'DATA') inData = true;
        if (verb === 'RSET') mail = { from: '', to: [], data: '' };
        if (verb === 'EHLO' || verb === 'HELO') say('250 double');
        else if (verb === 'MAIL' || verb === 'RSET') say('250 ok');
        else if (verb === 'RCPT') {
          const reply = rcptReplies.shift() ?? '250 ok';
          if (reply.startsWith('250')) mail.to.push(line);
          say(reply);
        } else if (verb === 'DATA') say('354 go on');
        else if (verb === 'QUIT') {
          say('221 bye');
          socket.end();
        } else say('502 not here');
      }
    });
    socket.on('error', () => undefined);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    port: (server.address() as AddressInfo).port,
    mails,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

const ORIGIN = 'https://airlock.example';
const ask = (id = 'apr_1') => ({
  event: 'approvalRequested',
  approval: {
    id,
    kind: 'policy',
    agent: 'default',
    door: 'fs',
    tool: 'delete_file',
    preview: { path: '/home/owner/SECRET-PATH.txt' },
    summary: 'delete ARGUMENT-VALUE',
  },
});

let dir: string;
let store: Store;
let events: EventBus;
let closers: (() => Promise<void>)[];

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'airlock-email-'));
  ({ store } = await openStore({ data: dir }));
  events = await createEventBus();
  closers = [];
});

afterEach(async () => {
  for (const c of closers.reverse()) await c();
  await events.close();
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

async function mailer(rcptReplies: string[] = []) {
  const smtp = await smtpDouble(rcptReplies);
  closers.push(smtp.close);
  const notifier = startNotifier({
    store,
    events,
    logger: silentLogger,
    origin: ORIGIN,
    config: {},
    retryDelaysMs: [10, 20],
    sources: [
      emailSource({
        host: '127.0.0.1',
        port: smtp.port,
        from: 'airlock@example.org',
        to: ['owner@example.org'],
      }),
    ],
  });
  closers.push(() => notifier.close());
  return { smtp, notifier };
}

describe('email', () => {
  it('mails the owner each new ask: who asks for what and the card link, no argument values', async () => {
    const { smtp } = await mailer();
    events.publish(ask());
    await waitFor(async () => (await listDeliveries(store))[0]?.status === 'delivered');
    expect(smtp.mails).toHaveLength(1);
    const { from, to, data } = smtp.mails[0]!;
    expect(from).toContain('airlock@example.org');
    expect(to[0]).toContain('owner@example.org');
    expect(data).toMatch(/^Subject: Airlock: approval requested$/m);
    expect(data).toContain('default asks to call delete_file on fs.');
    expect(data).toContain(`${ORIGIN}/#/approvals/apr_1`);
    expect(data).not.toContain('ARGUMENT-VALUE');
    expect(data).not.toContain('SECRET-PATH');
    expect((await listDeliveries(store))[0]).toMatchObject({
      format: 'email',
      webhook: 'owner@example.org',
      attempts: 1,
    });
  });

  it('retries after a temporary SMTP failure (4xx) and fails at once on a permanent one (5xx)', async () => {
    const { smtp, notifier } = await mailer(['451 try later']);
    events.publish(ask('apr_1'));
    await waitFor(async () => (await listDeliveries(store))[0]?.status === 'delivered');
    expect((await listDeliveries(store))[0]!.attempts).toBe(2);
    expect(smtp.mails).toHaveLength(1);
    await notifier.close();

    const again = await mailer(['550 no such user']);
    events.publish(ask('apr_2'));
    await waitFor(async () => (await listDeliveries(store)).some((d) => d.status === 'failed'));
    const failed = (await listDeliveries(store)).find((d) => d.status === 'failed')!;
    expect(failed.attempts).toBe(1);
    expect(failed.error).toMatch(/^SMTP 550/);
    expect(again.smtp.mails).toHaveLength(0);
  });

  it('notify.smtp is checked strictly: a misspelled key is an error', () => {
    const ok = { host: 'smtp.example.org', from: 'a@example.org', to: ['o@example.org'] };
    expect(ConfigFileSchema.safeParse({ notify: { smtp: ok } }).success).toBe(true);
    expect(ConfigFileSchema.safeParse({ notify: { smtp: { ...ok, hots: 'x' } } }).success).toBe(
      false,
    );
    expect(ConfigFileSchema.safeParse({ notify: { smtp: { ...ok, to: [] } } }).success).toBe(false);
  });
});
