/**
 * The notes door's wire format (spec/notes.md "Wire format: the response
 * envelope"): every outcome is one text item holding the JSON envelope
 * `{code, message?, resultJSON?}`, `resultJSON` being a JSON *string*, and
 * `isError` is true whenever `code` is not `ready`. Schema violations come
 * here as `malformedRequest` like any other failure, never as protocol errors.
 *
 * The envelope is capped at 16,384 UTF-8 bytes; a larger one becomes
 * `resultTooLarge` (never truncated). The same envelope is also given as
 * `structuredContent`, with the envelope schema as every tool's outputSchema.
 */
import { z } from 'zod';
import {
  AirlockError,
  failure,
  utf8Bytes,
  type ErrorCode,
  type Failure,
} from '../../kernel/index.js';
import type { Presenter, ToolResult } from '../../transport/surface.js';

export const WIRE_CODES = [
  'ready',
  'approvalRequired',
  'approvalDenied',
  'notAuthorized',
  'malformedRequest',
  'notFound',
  'versionConflict',
  'staleSelection',
  'noText',
  'selectionTooLarge',
  'resultTooLarge',
  'requestTooLarge',
  'busy',
  'timeout',
  'mutationUncertain',
  'internal',
] as const;
export type WireCode = (typeof WIRE_CODES)[number];

/** Codes only this door has; each travels on the nearest kernel code (for audit) plus `data.wireCode`. */
export type DoorCode = 'staleSelection' | 'noText' | 'selectionTooLarge';
const CARRIER: Record<DoorCode, ErrorCode> = {
  staleSelection: 'versionConflict',
  noText: 'notFound',
  selectionTooLarge: 'requestTooLarge',
};

/** Kernel codes the RooQi vocabulary lacks, mapped onto the nearest it has. */
const KERNEL_TO_WIRE: Record<ErrorCode, WireCode> = {
  malformedRequest: 'malformedRequest',
  notFound: 'notFound',
  noProject: 'notFound',
  approvalRequired: 'approvalRequired',
  approvalDenied: 'approvalDenied',
  notAuthorized: 'notAuthorized',
  versionConflict: 'versionConflict',
  confirmRequired: 'malformedRequest',
  requestTooLarge: 'requestTooLarge',
  resultTooLarge: 'resultTooLarge',
  busy: 'busy',
  timeout: 'timeout',
  cancelled: 'timeout',
  mutationUncertain: 'mutationUncertain',
  unavailable: 'busy',
  upstreamError: 'internal',
  internal: 'internal',
};

export const ENVELOPE_MAX_BYTES = 16_384;

export const EnvelopeSchema = z.object({
  code: z.enum(WIRE_CODES),
  message: z.string().optional(),
  resultJSON: z.string().optional(),
});
export type Envelope = z.infer<typeof EnvelopeSchema>;

export function doorFailure(code: DoorCode, message: string): Failure {
  return failure(CARRIER[code], message, { wireCode: code });
}

export function doorError(code: DoorCode, message: string): AirlockError {
  return new AirlockError(CARRIER[code], message, { wireCode: code });
}

/** The wire code of a kernel failure. */
export function wireCodeOf(f: Failure): WireCode {
  const carried = f.data?.wireCode;
  if (typeof carried === 'string' && (WIRE_CODES as readonly string[]).includes(carried)) {
    return carried as WireCode;
  }
  return KERNEL_TO_WIRE[f.code];
}

/** A failure's envelope; `versionConflict` also carries the current revision in `resultJSON`. */
export function failureEnvelope(f: Failure): Envelope {
  const envelope: Envelope = { code: wireCodeOf(f), message: f.message };
  const revision = f.data?.currentRevision;
  if (f.code === 'versionConflict' && typeof revision === 'number') {
    envelope.resultJSON = JSON.stringify({ currentRevision: revision });
  }
  return envelope;
}

function show(envelope: Envelope): ToolResult {
  return {
    content: [{ type: 'text', text: JSON.stringify(envelope) }],
    structuredContent: { ...envelope },
    isError: envelope.code !== 'ready',
  };
}

export const notesPresenter: Presenter = {
  success(_tool, value) {
    const envelope: Envelope = { code: 'ready', resultJSON: JSON.stringify(value ?? null) };
    const bytes = utf8Bytes(JSON.stringify(envelope));
    if (bytes > ENVELOPE_MAX_BYTES) {
      return show({
        code: 'resultTooLarge',
        message: `The result would be ${bytes} bytes; at most ${ENVELOPE_MAX_BYTES} can be returned and it is never truncated. Ask for less (a smaller rect, another document).`,
      });
    }
    return show(envelope);
  },
  failure(_tool, f) {
    return show(failureEnvelope(f));
  },
};
