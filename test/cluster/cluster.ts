/**
 * A scale-out deployment for the cluster suite: three `airlock serve`
 * processes on one PostgreSQL schema and a private Redis (its own port, so
 * the suite can stop and restart it), behind nginx — round-robin, no
 * stickiness, SSE unbuffered. The nginx configuration is the one
 * docs/scale-out.md shows.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startProcess, startServe, freePort, type Served } from '../helpers/servers.js';
import { waitFor } from '../helpers/wait.js';
import { dropSchema, PG_URL, uniqueSchema } from '../services/postgres.js';

export const NGINX = process.env.AIRLOCK_TEST_NGINX ?? '/usr/sbin/nginx';
export const REDIS_SERVER = process.env.AIRLOCK_TEST_REDIS_SERVER ?? '/usr/bin/redis-server';

/** The tested nginx configuration (docs/scale-out.md), for instance ports and a work folder. */
export function nginxConfig(listen: number, upstreams: number[], dir: string): string {
  return `worker_processes 1;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log warn;
events { worker_connections 512; }
http {
  access_log off;
  client_body_temp_path ${dir}/body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;

  upstream airlock {
    # Round-robin, no stickiness: any instance serves any request.
${upstreams.map((p) => `    server 127.0.0.1:${p} max_fails=1 fail_timeout=2s;`).join('\n')}
    keepalive 16;
  }

  server {
    listen 127.0.0.1:${listen};
    client_max_body_size 64m;

    location / {
      proxy_pass http://airlock;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header Host $http_host;
      proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
      # SSE (/api/v1/events, MCP streams) passes through as it is written.
      proxy_buffering off;
      proxy_request_buffering off;
      proxy_cache off;
      proxy_read_timeout 1h;
      # A dead instance: the request goes to the next one (also POSTs that never reached it).
      proxy_next_upstream error timeout http_502;
      proxy_connect_timeout 2s;
    }
  }
}
`;
}

export interface Cluster {
  /** nginx's URL: the deployment as clients see it. */
  url: string;
  /** The PostgreSQL schema the instances share (on PG_URL). */
  schema: string;
  /** Each instance's own URL (index 0..2). */
  instances: Served[];
  instanceUrl(i: number): string;
  agentToken: string;
  ownerToken: string;
  /** SIGKILLs an instance (nginx keeps routing around it). */
  kill(i: number): Promise<void>;
  /** Starts a stopped instance again on its port. */
  restart(i: number): Promise<void>;
  stopRedis(): Promise<void>;
  startRedis(): Promise<void>;
  close(): Promise<void>;
}

export async function startCluster({
  leaseMs = 3_000,
  doors = 'ledger',
  publicUrl = false,
}: {
  leaseMs?: number;
  doors?: string;
  /** Start every instance with `--public-url` = nginx's address (as `localhost`). */
  publicUrl?: boolean;
} = {}): Promise<Cluster> {
  const root = mkdtempSync(join(tmpdir(), 'airlock-cluster-'));
  const schema = uniqueSchema('cluster');
  const store = `${PG_URL}?schema=${schema}`;
  const redisPort = await freePort();
  const bus = `redis://127.0.0.1:${redisPort}`;
  let redis: ChildProcess | undefined;
  const startRedis = async () => {
    const started = await startProcess(
      REDIS_SERVER,
      ['--port', String(redisPort), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
      { ready: /Ready to accept connections/, name: 'redis-server' },
    );
    redis = started.child;
  };
  await startRedis();
  writeFileSync(join(root, 'config.json'), JSON.stringify({ jobs: { leaseMs } }));
  const ports = [await freePort(), await freePort(), await freePort()];
  const listen = await freePort();
  const startInstance = (i: number) => {
    const data = join(root, `data-${i}`);
    mkdirSync(data, { recursive: true });
    return startServe([
      '--port',
      String(ports[i]),
      '--doors',
      doors,
      '--data',
      data,
      '--store',
      store,
      '--bus',
      bus,
      '--config',
      join(root, 'config.json'),
      ...(publicUrl ? ['--public-url', `http://localhost:${listen}`] : []),
    ]).then((s) => ({ ...s, url: `http://127.0.0.1:${ports[i]}` }));
  };
  // The first instance makes the owner and the agent 'default' in the store; the others share them.
  const instances: Served[] = [await startInstance(0)];
  instances.push(...(await Promise.all([startInstance(1), startInstance(2)])));
  const first = instances[0]!;
  const agentToken = first.agentToken!;
  const ownerToken = first.ownerToken!;

  const nginxDir = join(root, 'nginx');
  mkdirSync(nginxDir, { recursive: true });
  writeFileSync(join(nginxDir, 'nginx.conf'), nginxConfig(listen, ports, nginxDir));
  const nginx = spawn(NGINX, ['-c', join(nginxDir, 'nginx.conf'), '-g', 'daemon off;'], {
    stdio: 'ignore',
  });
  const url = `http://127.0.0.1:${listen}`;
  await waitFor(async () => (await fetch(`${url}/healthz`).catch(() => null))?.status === 200, {
    timeoutMs: 10_000,
    message: 'nginx in front of the instances',
  });

  const kill = async (i: number) => {
    const s = instances[i]!;
    s.child.kill('SIGKILL');
    await s.exited;
  };
  return {
    url,
    schema,
    instances,
    instanceUrl: (i) => instances[i]!.url,
    agentToken,
    ownerToken,
    kill,
    async restart(i) {
      instances[i] = await startInstance(i);
    },
    async stopRedis() {
      const r = redis;
      redis = undefined;
      if (!r) return;
      const gone = new Promise((resolve) => r.once('close', resolve));
      r.kill('SIGKILL');
      await gone;
    },
    startRedis,
    async close() {
      nginx.kill('SIGTERM');
      for (const s of instances) s.child.kill('SIGTERM');
      await Promise.all(instances.map((s) => s.exited));
      redis?.kill('SIGKILL');
      rmSync(root, { recursive: true, force: true });
      await dropSchema(schema).catch(() => undefined);
    },
  };
}
