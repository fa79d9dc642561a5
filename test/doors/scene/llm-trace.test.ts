/**
 * Trace propagation to the scene's LLM (issue 33): a pipeline runs as a job,
 * whose span links to the call that started it; each translation request
 * to the LLM endpoint carries that job span's trace in `traceparent`.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { comicPage } from './helpers.js';
import { servedScene, sse, until, uploadPages } from './server.js';
import { structuredOf } from '../../helpers/results.js';
import { waitFor } from '../../helpers/wait.js';
import { countingServer, json, type CountingServer } from '../openapi/helpers.js';

let receiver: CountingServer;
let s: Awaited<ReturnType<typeof servedScene>>;
beforeAll(async () => {
  receiver = await countingServer((_req, res) => json(res, 200, {}));
  s = await servedScene({
    OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
    OTEL_BSP_SCHEDULE_DELAY: '50',
  });
});
afterAll(async () => {
  await s?.close();
  await receiver?.close();
});

interface Span {
  traceId: string;
  spanId: string;
  name: string;
}
const hex = (id: string) =>
  /^[0-9a-f]+$/i.test(id) ? id.toLowerCase() : Buffer.from(id, 'base64').toString('hex');
const spans = (): Span[] =>
  receiver.requests
    .filter((r) => r.url === '/v1/traces')
    .flatMap((r) =>
      (
        JSON.parse(r.body) as { resourceSpans: { scopeSpans: { spans: Span[] }[] }[] }
      ).resourceSpans.flatMap((rs) => rs.scopeSpans.flatMap((ss) => ss.spans)),
    )
    .map((x) => ({ ...x, traceId: hex(x.traceId), spanId: hex(x.spanId) }));

it("the pipeline's LLM requests carry the job span's trace in traceparent", async () => {
  const client = await s.mcp();
  await client.callTool({
    name: 'koharu.open_project',
    arguments: { path: 'traced.khrproj', createName: 'Traced' },
  });
  const upload = await uploadPages(s, [
    { name: 'one.png', bytes: await comicPage([{ text: 'HELLO', x: 40, y: 90 }]) },
  ]);
  expect(upload.status).toBe(201);
  const events = sse(s);
  await events.ready();
  const started = await client.callTool({
    name: 'koharu.start_pipeline',
    arguments: { steps: ['tesseract', 'llm'], targetLanguage: 'Portuguese' },
  });
  const { jobId } = structuredOf(started) as { jobId: string };
  await until(() => events.events.some((e) => e.event === 'jobFinished' && e.id === jobId), 90_000);
  expect(s.llm.requests.length).toBeGreaterThan(0);
  const traceparent = s.llm.requests[0]!.traceparent;
  expect(traceparent).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
  const [, traceId, spanId] = traceparent!.split('-');
  // The LLM request is a child of the job's own span.
  await waitFor(() => spans().some((x) => x.name === 'job pipeline'), {
    timeoutMs: 10_000,
    message: 'the job span',
  });
  const job = spans().find((x) => x.name === 'job pipeline')!;
  expect({ traceId, spanId }).toEqual({ traceId: job.traceId, spanId: job.spanId });
}, 120_000);
