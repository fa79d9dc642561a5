/** Runs the built `airlock` command (dist/) as a child process, as users do (servers: servers.ts). */
import { spawn } from 'node:child_process';
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
