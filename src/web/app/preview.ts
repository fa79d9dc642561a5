/**
 * A policy ask's preview (spec/authority.md §3) as a person reads it: the
 * summary line, then the door's details in a stable order — what runs
 * (tool, door, effect, targets), then the request (method, URL, headers,
 * body), then whatever else the door added. Scalars read as text, lists of
 * scalars as one line, objects and multi-line text as a block. Pure.
 */
export interface PreviewDetail {
  key: string;
  label: string;
  text: string;
  /** Shown as a preformatted block (JSON, or text with line breaks). */
  block: boolean;
}

export interface ReadablePreview {
  summary: string;
  details: PreviewDetail[];
}

const ORDER = [
  // What changed since the owner last approved, and the door's account of the effect, first.
  'changed',
  'changedSince',
  'changes',
  'totals',
  'tool',
  'door',
  'effect',
  'targets',
  'method',
  'url',
  'headers',
  'body',
  'action',
  'parameters',
  'page',
  'element',
  'arguments',
];

/** Details shown as pictures (the card draws them; text lists leave them out). */
const PICTURES = new Set(['thumbnails']);

/** One page's before/after pictures as the scene door keeps them (PNG data URLs). */
export interface PageThumbnails {
  page: string;
  before: string;
  after: string | null;
}

const PNG_URL = /^data:image\/png;base64,[A-Za-z0-9+/]+=*$/;

/** The preview's page thumbnails, only well-formed PNG data URLs. */
export function thumbnailsOf(preview: unknown): PageThumbnails[] {
  const list = (preview as { thumbnails?: unknown } | null)?.thumbnails;
  if (!Array.isArray(list)) return [];
  return list.flatMap((t: unknown) => {
    const { page, before, after } = (t ?? {}) as Record<string, unknown>;
    if (typeof page !== 'string' || typeof before !== 'string' || !PNG_URL.test(before)) return [];
    if (after !== null && (typeof after !== 'string' || !PNG_URL.test(after))) return [];
    return [{ page, before, after }];
  });
}

const LABELS: Record<string, string> = { url: 'URL', targets: 'Targets' };

/** `pageUrl` → "Page url", `method` → "Method". */
export function detailLabel(key: string): string {
  const known = LABELS[key];
  if (known) return known;
  const words = key.replace(/([a-z0-9])([A-Z])/g, '$1 $2').replace(/[_-]+/g, ' ');
  return words.charAt(0).toUpperCase() + words.slice(1).toLowerCase();
}

const scalar = (v: unknown): v is string | number | boolean =>
  typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean';

function detailText(value: unknown): { text: string; block: boolean } {
  if (value === null || value === undefined) return { text: '—', block: false };
  if (scalar(value)) {
    const text = String(value);
    return { text, block: text.includes('\n') };
  }
  if (Array.isArray(value) && value.every(scalar))
    return { text: value.length > 0 ? value.join(', ') : '—', block: false };
  return { text: JSON.stringify(value, null, 2), block: true };
}

/** The preview's summary (or `fallback`) and its details in reading order. */
export function readablePreview(preview: unknown, fallback: string): ReadablePreview {
  if (preview === null || preview === undefined) return { summary: fallback, details: [] };
  if (typeof preview !== 'object' || Array.isArray(preview))
    return {
      summary: fallback,
      details: [{ key: 'preview', label: 'Preview', ...detailText(preview) }],
    };
  const record = preview as Record<string, unknown>;
  const keys = Object.keys(record).filter((k) => k !== 'summary' && !PICTURES.has(k));
  const rank = (k: string) => (ORDER.includes(k) ? ORDER.indexOf(k) : ORDER.length);
  const ordered = keys
    .map((k, i) => ({ k, i }))
    .sort((a, b) => rank(a.k) - rank(b.k) || a.i - b.i)
    .map(({ k }) => k);
  return {
    summary: typeof record.summary === 'string' && record.summary ? record.summary : fallback,
    details: ordered.map((key) => ({ key, label: detailLabel(key), ...detailText(record[key]) })),
  };
}
