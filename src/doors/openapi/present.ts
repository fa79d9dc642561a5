/**
 * How the openapi door's outcomes look: pretty JSON text (spec/openapi.md
 * "Results"), cut at 60,000 characters with a note giving the full length
 * and how to narrow the request; `_resources` and `_describe` also carry
 * `structuredContent`. Every text passes the secret scrubber last, so no
 * configured credential is ever shown — even when the API echoes it.
 */
import type { Presenter, ToolResult } from '../../transport/surface.js';

export const RESULT_MAX_CHARS = 60_000;

/** What the door's handlers return: the text shown, and structured content for tools with an output schema. */
export interface Shown {
  text: string;
  structured?: Record<string, unknown>;
}

export const pretty = (value: unknown) => JSON.stringify(value, null, 2) ?? 'null';

export function cutText(text: string, hint: string): string {
  if (text.length <= RESULT_MAX_CHARS) return text;
  return `${text.slice(0, RESULT_MAX_CHARS)}\n\n[Cut at ${RESULT_MAX_CHARS.toLocaleString('en-US')} of ${text.length.toLocaleString('en-US')} characters. ${hint}]`;
}

const NARROW =
  'Narrow the request: select fewer fields (e.g. params fields/opt_fields), add filters, lower per_page/limit, or use iterate with a smaller limit.';

export function createPresenter(scrub: (text: string) => string): Presenter {
  return {
    success(tool, value) {
      const shown = value as Shown;
      const result: ToolResult = {
        content: [{ type: 'text', text: cutText(scrub(shown.text), NARROW) }],
      };
      if (tool.output && shown.structured)
        result.structuredContent = JSON.parse(scrub(JSON.stringify(shown.structured))) as Record<
          string,
          unknown
        >;
      return result;
    },
    failure(_tool, f) {
      const text = pretty({ code: f.code, message: f.message, ...(f.data ?? {}) });
      return { content: [{ type: 'text', text: cutText(scrub(text), NARROW) }], isError: true };
    },
  };
}
