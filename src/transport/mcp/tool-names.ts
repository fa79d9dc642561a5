/**
 * How tools are named on the wire (issue 36). `exact` lists the doors' own
 * names, the seeds' (`koharu.apply`); `portable` lists names every host
 * accepts, `^[a-zA-Z0-9_-]{1,64}$` — Claude Desktop and claude.ai withhold a
 * connector with other names, and the OpenAI and Copilot APIs answer 400.
 * Either way `tools/call` accepts both forms, and the kernel, the owner's
 * rules, the audit and the previews only ever see the exact name.
 */
import { createHash } from 'node:crypto';

export type ToolNames = 'exact' | 'portable';
export const TOOL_NAME_MODES: readonly ToolNames[] = ['exact', 'portable'];

/** The name hosts accept. */
export const PORTABLE_TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;
const MAX_LENGTH = 64;

/**
 * `name` as a portable name: accents dropped, every other character outside
 * `[a-zA-Z0-9_-]` becomes `_` (`koharu.apply` → `koharu_apply`); a name longer
 * than 64 keeps its first 55 characters and 8 hex digits of its SHA-256, so
 * the mapping is deterministic and two long names stay apart.
 */
export function portableToolName(name: string): string {
  if (PORTABLE_TOOL_NAME.test(name)) return name;
  let out = name
    .normalize('NFKD')
    .replace(/\p{M}/gu, '')
    .replace(/[^a-zA-Z0-9_-]/g, '_');
  if (out.length === 0) out = '_';
  if (out.length > MAX_LENGTH) {
    const hash = createHash('sha256').update(name).digest('hex').slice(0, 8);
    out = `${out.slice(0, MAX_LENGTH - 9)}_${hash}`;
  }
  return out;
}

/** A served tool: where it lives and its exact name, whatever name the client used. */
export interface NamedTool<T> {
  mount: string;
  /** The door's own name: what the kernel, policy and audit see. */
  name: string;
  tool: T;
}

/**
 * The names a set of tools is listed under and called by: `listed` (exact or
 * portable) in the list, and the other form accepted too where it names one
 * tool only. Throws when two tools would be listed under one name.
 */
export function nameTools<T extends { name: string }>(
  mode: ToolNames,
  tools: { mount: string; tool: T }[],
): { listed: Map<string, NamedTool<T>>; lookup: Map<string, NamedTool<T>> } {
  const listed = new Map<string, NamedTool<T>>();
  for (const { mount, tool } of tools) {
    const shown = mode === 'portable' ? portableToolName(tool.name) : tool.name;
    const taken = listed.get(shown);
    if (taken) {
      throw new Error(
        taken.name === tool.name
          ? `tool '${tool.name}' is offered by both '${taken.mount}' and '${mount}'; give one of them another --prefix`
          : `tools '${taken.name}' ('${taken.mount}') and '${tool.name}' ('${mount}') would both be listed as '${shown}' with --tool-names portable; give one of them another --prefix, or use --tool-names exact`,
      );
    }
    listed.set(shown, { mount, name: tool.name, tool });
  }
  const lookup = new Map(listed);
  const ambiguous = new Set<string>();
  for (const entry of listed.values()) {
    const other = mode === 'portable' ? entry.name : portableToolName(entry.name);
    if (listed.has(other)) continue;
    if (lookup.has(other)) ambiguous.add(other);
    else lookup.set(other, entry);
  }
  for (const name of ambiguous) lookup.delete(name);
  return { listed, lookup };
}
