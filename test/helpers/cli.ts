/** Runs the built `airlock` command (dist/) as a child process, as users do. */
import { spawn, type ChildProcess } from 'node:child_process';
import { afterAll } from 'vitest';
import { fileURLToPath } from 'node:url';

export const BIN = fileURLToPath(new URL('../../bin/airlock.js', import.meta.url));

export const testEnv = (extra: Record<string, string> = {}): NodeJS.ProcessEnv => ({
  ...process.env,
  AIRLOCK_ENABLE_TEST_DOORS: '1',
  AIRLOCK_LOG_LEVEL: 'warn',
  ...extra,
});

export interface RunResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export function run(args: string[], env = testEnv(), timeoutMs = 20_000): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

export interface Served {
  child: ChildProcess;
  url: string;
  stdout: () => string;
  stderr: () => string;
  exited: Promise<number | null>;
}

/**
 * Every server a test file starts is stopped when the file ends, even one a
 * test forgot or overwrote, so no `airlock serve` outlives its test run.
 */
const live = new Set<ChildProcess>();
afterAll(async () => {
  const waits = [...live].map((child) => new Promise((resolve) => child.once('close', resolve)));
  for (const child of live) child.kill('SIGKILL');
  await Promise.all(waits);
});

/** Starts `airlock serve` (free HTTP and relay ports unless given) and resolves once it printed its MCP URL. */
export function startServe(args: string[], env = testEnv()): Promise<Served> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [BIN, 'serve', '--port', '0', '--relay-port', '0', ...args],
      {
        env,
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    live.add(child);
    let out = '';
    let err = '';
    const exited = new Promise<number | null>((r) =>
      child.on('close', (code) => {
        live.delete(child);
        r(code);
      }),
    );
    const timer = setTimeout(() => reject(new Error(`serve did not start: ${err}`)), 20_000);
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /MCP \(all doors\)\s+(http:\/\/\S+)\/mcp/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve({ child, url: m[1]!, stdout: () => out, stderr: () => err, exited });
      }
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`serve exited with ${code}: ${err}`));
    });
  });
}
