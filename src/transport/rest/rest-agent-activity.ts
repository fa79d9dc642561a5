/**
 * What each agent did lately (issue 27, the Agents screen), computed from the
 * audit in the store: when it was last seen, its calls since the start of
 * the day (UTC) by effect and by outcome, and its last few calls. Owner only.
 * An agent's calls are the audit entries whose connection is one of its own
 * (`agent:<name>`, `agent:<name>/session:…`); stdio processes count under
 * their `stdio:<client>` name.
 */
import { agentOfConnection, type Kernel } from '../../kernel/index.js';
import type { AuditEntry } from '../../kernel/index.js';
import type { RestRoute } from '../surface.js';

/** How far back the activity looks (the newest entries of the audit). */
const SCAN = 10_000;
/** Calls listed per agent. */
const LAST_CALLS = 10;
const DAY_MS = 86_400_000;

export interface AgentActivity {
  agent: string;
  /** The time of its newest audited call, or null when none is in the scanned audit. */
  lastSeen: number | null;
  today: {
    calls: number;
    /** `read`, `write`, `destructive`, or `varies` (a tool whose effect depends on its input). */
    byEffect: Record<string, number>;
    /** `ok` or the error code. */
    byOutcome: Record<string, number>;
  };
  lastCalls: Array<Pick<AuditEntry, 'id' | 'at' | 'door' | 'tool' | 'result' | 'decision'>>;
}

/** The effect a tool is declared with; `varies` when it depends on the call. */
function effectName(kernel: Kernel, door: string, tool: string): string {
  const def = kernel.tool(door, tool);
  if (!def) return 'unknown';
  return typeof def.effect === 'string' ? def.effect : 'varies';
}

export async function agentActivity(kernel: Kernel, now: number): Promise<AgentActivity[]> {
  const since = now - (now % DAY_MS);
  const entries = await kernel.audit.list({ order: 'desc', limit: SCAN });
  const byAgent = new Map<string, AgentActivity>();
  for (const e of entries) {
    const agent = agentOfConnection(e.connection);
    if (agent === null) continue;
    let a = byAgent.get(agent);
    if (!a) {
      a = {
        agent,
        lastSeen: null,
        today: { calls: 0, byEffect: {}, byOutcome: {} },
        lastCalls: [],
      };
      byAgent.set(agent, a);
    }
    a.lastSeen = Math.max(a.lastSeen ?? 0, e.at);
    if (a.lastCalls.length < LAST_CALLS)
      a.lastCalls.push({
        id: e.id,
        at: e.at,
        door: e.door,
        tool: e.tool,
        result: e.result,
        decision: e.decision,
      });
    if (e.at < since) continue;
    a.today.calls++;
    const effect = effectName(kernel, e.door, e.tool);
    a.today.byEffect[effect] = (a.today.byEffect[effect] ?? 0) + 1;
    a.today.byOutcome[e.result] = (a.today.byOutcome[e.result] ?? 0) + 1;
  }
  return [...byAgent.values()];
}

export function agentActivityRoute(kernel: Kernel, now: () => number = Date.now): RestRoute {
  return {
    method: 'GET',
    path: 'agents/activity',
    summary:
      "Each agent's last seen time, calls today (UTC) by effect and outcome, and last calls, from the newest audit entries",
    handler: async () => ({
      status: 200,
      body: { activity: await agentActivity(kernel, now()) },
    }),
  };
}
