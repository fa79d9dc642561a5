/**
 * `llm`: translates text nodes through any OpenAI-compatible
 * chat-completions endpoint. A page's segments are sent numbered
 * (`1: …`), and the reply is mapped back by number, so a model that
 * reorders or merges lines cannot shift translations onto the wrong
 * bubble; a reply that misses a number fails the page (nothing applied).
 */
import type { Page } from '../model/model.js';
import type { Op } from '../model/ops.js';
import type { Engine } from './registry.js';

export interface LlmConfig {
  baseUrl?: string | undefined;
  apiKey?: string | undefined;
  model?: string | undefined;
  timeoutMs?: number | undefined;
}

export function numberSegments(segments: string[]): string {
  return segments.map((s, i) => `${i + 1}: ${s.replace(/\s*\n\s*/g, ' ').trim()}`).join('\n');
}

/** Number → text, from a reply of `<n>: text` lines (continuation lines join the previous number). */
export function parseNumbered(reply: string): Map<number, string> {
  const out = new Map<number, string>();
  let current: number | null = null;
  for (const line of reply.split(/\r?\n/)) {
    const m = /^\s*(?:\[(\d+)\]|(\d+))\s*[:.)\]-]?\s*(.*)$/.exec(line);
    if (m && (m[1] ?? m[2])) {
      current = Number(m[1] ?? m[2]);
      out.set(current, m[3]!.trim());
    } else if (current !== null && line.trim()) {
      out.set(current, `${out.get(current)}\n${line.trim()}`.trim());
    }
  }
  return out;
}

const LANGUAGE_NAMES: Record<string, string> = {
  en: 'English',
  ja: 'Japanese',
  zh: 'Chinese',
  'zh-Hant': 'Traditional Chinese',
  ko: 'Korean',
};

export function defaultSystemPrompt(targetLanguage: string, sourceLanguage?: string): string {
  const from = sourceLanguage ? ` from ${LANGUAGE_NAMES[sourceLanguage] ?? sourceLanguage}` : '';
  return (
    `You translate comic and manga dialogue${from} into ${targetLanguage}. ` +
    'Segments are in reading order (right to left for manga). ' +
    'The user sends numbered segments, one per line, as "<number>: <text>". ' +
    'Answer with every number, one per line, as "<number>: <translation>", and nothing else.'
  );
}

/** `fetch`, with a network failure said as what it is (fetch itself only says "fetch failed"). */
async function reach(url: string, init: RequestInit): Promise<Response> {
  try {
    return await fetch(url, init);
  } catch (error) {
    if (init.signal?.aborted) throw error;
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    throw new Error(
      `could not reach the translation endpoint ${url} (${cause?.code ?? cause?.message ?? String(error)}); check scene.llm.baseUrl or AIRLOCK_LLM_BASE_URL`,
      { cause: error },
    );
  }
}

const NOT_CONFIGURED =
  'the llm engine has no translation endpoint: set scene.llm.baseUrl in the config file or AIRLOCK_LLM_BASE_URL (any OpenAI-compatible chat-completions URL)';

/** At most this many characters of each neighbouring page's text go into the prompt. */
const CONTEXT_CHARS = 1_200;

/** The OCR text of a page's nodes, one line each, capped. */
function pageText(page: Page): string {
  const text = page.nodes
    .flatMap((n) => ('text' in n.kind && n.kind.text.text?.trim() ? [n.kind.text.text.trim()] : []))
    .join('\n');
  return text.length > CONTEXT_CHARS ? `${text.slice(0, CONTEXT_CHARS)}…` : text;
}

/**
 * The text of the pages before and after this one, so the translation keeps
 * names, tone and running sentences across pages (issue 18). Context only:
 * the model is told not to translate it.
 */
export function neighbourContext(pageId: string, pages: readonly Page[] | undefined): string {
  if (!pages) return '';
  const at = pages.findIndex((p) => p.id === pageId);
  if (at < 0) return '';
  const parts: string[] = [];
  const before = at > 0 ? pageText(pages[at - 1]!) : '';
  const after = at + 1 < pages.length ? pageText(pages[at + 1]!) : '';
  if (before) parts.push(`Previous page:\n${before}`);
  if (after) parts.push(`Next page:\n${after}`);
  if (!parts.length) return '';
  return `\n\nFor context only (do not translate or answer it), the text around this page:\n${parts.join('\n\n')}`;
}

export function createLlmEngine(config: () => LlmConfig): Engine {
  return {
    id: 'llm',
    name: 'LLM translation (OpenAI-compatible chat completions)',
    needs: ['OcrText'],
    produces: ['Translations'],
    unconfigured: () => (config().baseUrl ? null : NOT_CONFIGURED),
    async start(options) {
      const { baseUrl, apiKey, model = 'default', timeoutMs = 120_000 } = config();
      if (!baseUrl) throw new Error(NOT_CONFIGURED);
      const target = options.targetLanguage ?? 'English';
      // The numbering rule always follows the caller's prompt: the mapping depends on it.
      const rule = defaultSystemPrompt(target, options.sourceLanguage);
      const system = options.systemPrompt ? `${options.systemPrompt}\n\n${rule}` : rule;
      const url = `${baseUrl.replace(/\/+$/, '')}/chat/completions`;
      return {
        async page({ page, signal, pages, skipped, traceHeaders }) {
          const nodes = page.nodes.filter(
            (n) =>
              'text' in n.kind &&
              n.kind.text.text?.trim() &&
              (!options.textNodeIds || options.textNodeIds.includes(n.id)),
          );
          if (!nodes.length) {
            skipped?.('nothingToDo', 'No text to translate on this page.');
            return [];
          }
          const segments = nodes.map((n) => ('text' in n.kind ? n.kind.text.text! : ''));
          const response = await reach(url, {
            method: 'POST',
            headers: {
              ...traceHeaders,
              'content-type': 'application/json',
              ...(apiKey ? { authorization: `Bearer ${apiKey}` } : {}),
            },
            body: JSON.stringify({
              model,
              temperature: 0,
              messages: [
                { role: 'system', content: system + neighbourContext(page.id, pages) },
                { role: 'user', content: numberSegments(segments) },
              ],
            }),
            signal: AbortSignal.any([signal, AbortSignal.timeout(timeoutMs)]),
          });
          if (!response.ok)
            throw new Error(`the translation endpoint answered HTTP ${response.status}`);
          const body = (await response.json()) as {
            choices?: { message?: { content?: string } }[];
          };
          const content = body.choices?.[0]?.message?.content;
          if (typeof content !== 'string')
            throw new Error('the translation endpoint answered without choices[0].message.content');
          const byNumber = parseNumbered(content);
          const missing = segments.map((_, i) => i + 1).filter((n) => !byNumber.has(n));
          if (missing.length)
            throw new Error(`the translation reply has no segment ${missing.join(', ')}`);
          return nodes.map((n, i): Op => ({
            updateNode: {
              page: page.id,
              id: n.id,
              patch: { data: { text: { translation: byNumber.get(i + 1)! } } },
            },
          }));
        },
      };
    },
  };
}
