/**
 * Reading MCP tool results the way a client sees them (what `client.callTool`
 * returns over a transport). Results of `kernel.call` are read by
 * test/helpers/kernel.ts, not here.
 */

interface ResultLike {
  content?: { type?: string; text?: string }[];
  structuredContent?: Record<string, unknown>;
}

/** The text of the result's first content item; throws, naming the result, when it has none. */
export function toolText(result: unknown): string {
  const text = (result as ResultLike).content?.[0]?.text;
  if (typeof text !== 'string')
    throw new Error(`tool result has no text content: ${JSON.stringify(result).slice(0, 500)}`);
  return text;
}

/** The first content item's text parsed as JSON (the door's envelope or result object). */
export function toolJson(result: unknown): Record<string, unknown> {
  return JSON.parse(toolText(result)) as Record<string, unknown>;
}

/** The result's structuredContent. */
export const structuredOf = (result: unknown) =>
  (result as { structuredContent: Record<string, unknown> }).structuredContent;

/**
 * Lenient reading for UI tests: the first text item parsed as JSON, `{ text }`
 * when it is not JSON, and `{}` when there is no text item.
 */
export function toolBody(result: unknown): Record<string, unknown> {
  const { content } = result as Required<Pick<ResultLike, 'content'>>;
  const text = content.find((c) => c.type === 'text')?.text ?? '{}';
  try {
    return JSON.parse(text) as Record<string, unknown>;
  } catch {
    return { text };
  }
}
