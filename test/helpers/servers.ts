/**
 * Starting servers for tests: child processes that print a line once they
 * listen (`airlock serve`, `airlock relay`, `airlock openapi --port`, prism),
 * and loopback HTTP servers on a free port.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll } from 'vitest';
import { BIN, run, testEnv } from './cli.js';

export interface Started {
  child: ChildProcess;
  /** The match of `ready` in the output. */
  match: RegExpExecArray;
  stdout: () => string;
  stderr: () => string;
  exited: Promise<number | null>;
}

export interface StartOptions {
  env?: NodeJS.ProcessEnv;
  /** What the process prints once it is ready. */
  ready: RegExp;
  /** Where to look for `ready` (default stdout). */
  stream?: 'stdout' | 'stderr' | 'either';
  /** How long to wait for `ready` (default 20 s). */
  timeoutMs?: number;
  /** Names the process in errors. */
  name?: string;
  /** stdin of the child (default 'ignore'). */
  stdin?: 'ignore' | 'pipe';
}

/**
 * Every process a test file starts here is stopped when the file ends, even
 * one a test forgot or overwrote, so none outlives its test run.
 */
const live = new Set<ChildProcess>();
afterAll(async () => {
  const waits = [...live].map((child) => new Promise((resolve) => child.once('close', resolve)));
  for (const child of live) child.kill('SIGKILL');
  await Promise.all(waits);
});

/**
 * Spawns `command args` and resolves once `ready` matches its output;
 * rejects with the output so far when it exits first or `timeoutMs` passes.
 */
export function startProcess(
  command: string,
  args: string[],
  options: StartOptions,
): Promise<Started> {
  const name = options.name ?? args.slice(0, 2).join(' ');
  const stream = options.stream ?? 'stdout';
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      env: options.env ?? testEnv(),
      stdio: [options.stdin ?? 'ignore', 'pipe', 'pipe'],
    });
    live.add(child);
    let out = '';
    let err = '';
    let started = false;
    const exited = new Promise<number | null>((r) =>
      child.on('close', (code) => {
        live.delete(child);
        r(code);
      }),
    );
    const timer = setTimeout(
      () =>
        reject(
          new Error(
            `${name} did not start within ${options.timeoutMs ?? 20_000} ms: ${err.slice(-2000)}${out.slice(-2000)}`,
          ),
        ),
      options.timeoutMs ?? 20_000,
    );
    const check = () => {
      if (started) return;
      const text = stream === 'stdout' ? out : stream === 'stderr' ? err : out + err;
      const match = options.ready.exec(text);
      if (!match) return;
      started = true;
      clearTimeout(timer);
      resolve({ child, match, stdout: () => out, stderr: () => err, exited });
    };
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      check();
    });
    child.stderr!.on('data', (d: Buffer) => {
      err += d.toString();
      check();
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`${name} exited with ${code}: ${err.slice(-2000)}${out.slice(-2000)}`));
    });
  });
}

export interface Served extends Started {
  url: string;
  /** The default agent's token, from the printed HTTP client configuration (null when not known). */
  agentToken: string | null;
  /** The owner token, read from the owner.token file the start-up output names (null when none). */
  ownerToken: string | null;
  /** The single-use owner sign-in link for the web UI (null when none was printed). */
  loginUrl: string | null;
}

/**
 * Starts `airlock serve` (free HTTP and relay ports unless given) and
 * resolves once it printed its whole start-up output, with the credentials
 * it printed.
 */
export async function startServe(args: string[], env = testEnv()): Promise<Served> {
  const started = await startProcess(
    process.execPath,
    [BIN, 'serve', '--port', '0', '--relay-port', '0', ...args],
    { env, ready: /Press Ctrl\+C to stop\./, name: 'serve' },
  );
  const printed = printedCredentials(started.stdout());
  // The sign-in link goes to a terminal only (issue 25); from a pipe, ask for one as the owner would.
  const data = args[args.indexOf('--data') + 1];
  if (!printed.loginUrl && printed.ownerToken && args.includes('--data') && data) {
    const made = await run(['owner', 'link', '--data', data, '--url', printed.url], env);
    if (made.code === 0) printed.loginUrl = made.stdout.trim();
  }
  return { ...started, ...printed };
}

/** The URL, tokens and sign-in link `airlock serve` (or `airlock openapi`) printed. */
export function printedCredentials(out: string) {
  const url = /MCP \(all doors\)\s+(http:\/\/\S+)\/mcp/.exec(out)?.[1] ?? '';
  const agentToken = /"Authorization": "Bearer (ak_[\w-]+)"/.exec(out)?.[1] ?? null;
  const loginUrl = /Owner sign-in\s+(http:\/\/\S+\/login#code=\S+)/.exec(out)?.[1] ?? null;
  const ownerFile = /or paste (\S+owner\.token)[);]/.exec(out)?.[1];
  const ownerToken =
    ownerFile && existsSync(ownerFile) ? readFileSync(ownerFile, 'utf8').trim() : null;
  return { url, agentToken, ownerToken, loginUrl };
}

/** A port that was free a moment ago on 127.0.0.1. */
export async function freePort(): Promise<number> {
  const server = createServer();
  const port = await listenLoopback(server);
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Listens on a free loopback port and resolves with the port. */
export async function listenLoopback(server: Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}
