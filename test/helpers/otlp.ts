/**
 * A test OTLP/HTTP receiver on loopback (the exporter's JSON encoding) and
 * the spans it got, ids as hex (issue 33's trace tests).
 */
import { countingServer, json, type CountingServer } from '../doors/openapi/helpers.js';

export interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes: { key: string; value: Record<string, unknown> }[];
  links?: { traceId: string; spanId: string }[];
}

/** OTLP/JSON ids are hex; some encoders send base64: read either as hex. */
const hex = (id: string | undefined) =>
  !id ? '' : /^[0-9a-f]+$/i.test(id) ? id.toLowerCase() : Buffer.from(id, 'base64').toString('hex');

export const attr = (span: OtlpSpan, key: string) => {
  const value = span.attributes.find((a) => a.key === key)?.value;
  return value ? Object.values(value)[0] : undefined;
};

/** Every attribute value of the spans, as text (for "no argument value" checks). */
export const attributeValues = (spans: OtlpSpan[]) =>
  spans.flatMap((s) => s.attributes.map((a) => String(Object.values(a.value)[0])));

export interface OtlpReceiver {
  url: string;
  server: CountingServer;
  spans(): OtlpSpan[];
  close(): Promise<void>;
}

export async function otlpReceiver(): Promise<OtlpReceiver> {
  const server = await countingServer((_req, res) => json(res, 200, {}));
  return {
    url: server.url,
    server,
    spans: () =>
      server.requests
        .filter((r) => r.url === '/v1/traces')
        .flatMap((r) =>
          (
            JSON.parse(r.body) as { resourceSpans: { scopeSpans: { spans: OtlpSpan[] }[] }[] }
          ).resourceSpans.flatMap((rs) => rs.scopeSpans.flatMap((ss) => ss.spans)),
        )
        .map((s) => ({
          ...s,
          traceId: hex(s.traceId),
          spanId: hex(s.spanId),
          parentSpanId: hex(s.parentSpanId),
          links: (s.links ?? []).map((l) => ({ traceId: hex(l.traceId), spanId: hex(l.spanId) })),
        })),
    close: () => server.close(),
  };
}
