/**
 * Bounded reading of an upstream's stdio stream: a message (one line) over
 * `maxBytes` is discarded as it streams — never buffered whole — and
 * answered, when its JSON-RPC id can be told from its first and last bytes,
 * by an error response in its place (`data.airlock: 'resultTooLarge'`), so
 * the one call fails and the connection stays up for every other call. The
 * SDK's own buffer would throw and close the connection instead.
 */
import type { JSONRPCMessage } from '@modelcontextprotocol/client';

/** An upstream message over this is discarded (`upstreams.NAME.limits.upstreamMessageBytes`). */
export const DEFAULT_UPSTREAM_MESSAGE_BYTES = 8 * 1024 * 1024;
/** The MCP error code of the synthesised answer (implementation-defined range). */
export const TOO_LARGE_CODE = -32_099;
/** What the synthesised error's data says, for forward.ts to answer `resultTooLarge`. */
export const TOO_LARGE_MARK = 'resultTooLarge';

const EDGE = 512;
const ID_AT_END = /"id"\s*:\s*(-?\d+|"(?:[^"\\]|\\.)*")\s*\}\s*$/;
const ID_AT_START =
  /^\s*\{\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?"id"\s*:\s*(-?\d+|"(?:[^"\\]|\\.)*")/;

interface Discarding {
  head: Buffer;
  tail: Buffer;
  bytes: number;
}

export class BoundedReadBuffer {
  private chunks: Buffer[] = [];
  private size = 0;
  private discarding: Discarding | null = null;
  private ready: JSONRPCMessage[] = [];

  constructor(
    private readonly maxBytes: number,
    private readonly onDiscarded: (bytes: number, id: string | number | null) => void,
  ) {}

  append(chunk: Buffer): void {
    let rest = chunk;
    while (rest.length > 0) {
      const newline = rest.indexOf(0x0a);
      const piece = newline === -1 ? rest : rest.subarray(0, newline);
      rest = newline === -1 ? Buffer.alloc(0) : rest.subarray(newline + 1);
      if (this.discarding) this.keepEdges(piece);
      else if (this.size + piece.length > this.maxBytes) {
        const head = Buffer.concat([...this.chunks, piece.subarray(0, EDGE)]).subarray(0, EDGE);
        this.discarding = { head, tail: Buffer.alloc(0), bytes: this.size };
        this.chunks = [];
        this.size = 0;
        this.keepEdges(piece);
      } else if (piece.length > 0) {
        this.chunks.push(piece);
        this.size += piece.length;
      }
      if (newline !== -1) this.endLine();
    }
  }

  readMessage(): JSONRPCMessage | null {
    return this.ready.shift() ?? null;
  }

  clear(): void {
    this.chunks = [];
    this.size = 0;
    this.discarding = null;
    this.ready = [];
  }

  private keepEdges(piece: Buffer) {
    const d = this.discarding!;
    d.bytes += piece.length;
    d.tail = Buffer.concat([d.tail, piece.subarray(Math.max(0, piece.length - EDGE))]);
    if (d.tail.length > EDGE) d.tail = d.tail.subarray(d.tail.length - EDGE);
  }

  private endLine() {
    const discarded = this.discarding;
    if (discarded) {
      this.discarding = null;
      const id = idOf(discarded.head.toString('latin1'), discarded.tail.toString('latin1'));
      this.onDiscarded(discarded.bytes, id);
      if (id !== null)
        this.ready.push({
          jsonrpc: '2.0',
          id,
          error: {
            code: TOO_LARGE_CODE,
            message: `The upstream's answer was ${discarded.bytes} bytes, over the ${this.maxBytes}-byte limit for one upstream message; it was discarded.`,
            data: { airlock: TOO_LARGE_MARK, bytes: discarded.bytes, limit: this.maxBytes },
          },
        } as JSONRPCMessage);
      return;
    }
    const line = Buffer.concat(this.chunks).toString('utf8').replace(/\r$/, '');
    this.chunks = [];
    this.size = 0;
    if (line.trim() === '') return;
    try {
      const message = JSON.parse(line) as { jsonrpc?: unknown } | null;
      if (message?.jsonrpc === '2.0') this.ready.push(message as JSONRPCMessage);
    } catch {
      // Not a JSON-RPC message (a stray log line on stdout): skipped, as the SDK does.
    }
  }
}

function idOf(head: string, tail: string): string | number | null {
  const found = ID_AT_END.exec(tail)?.[1] ?? ID_AT_START.exec(head)?.[1];
  if (found === undefined) return null;
  try {
    return JSON.parse(found) as string | number;
  } catch {
    return null;
  }
}
