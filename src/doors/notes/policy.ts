/**
 * What the owner's policy reads of a notes write (authority.md §3, issue 27):
 * the one note it acts on (the subject a 15-minute approval may be narrowed
 * to), the note's revision (the state the owner judged: an approved call
 * whose note moved since is asked again), and a preview with the note's
 * title, revision and the text to be appended or the annotation.
 *
 * The document is read only inside the project this connection was granted,
 * so neither the owner's card nor the agent's "what changed" line says
 * anything of a note the agent may not use.
 */
import type { CallPolicySpec, Connection, Preview } from '../../kernel/index.js';
import { getDocument, type NoteDocument } from './documents.js';
import type { NotesRuntime } from './runtime.js';
import type { Annotate, AppendText } from './schemas.js';

/** A preview's text is cut to this many characters, with a "… N more" line. */
export const PREVIEW_TEXT_CHARS = 600;

/** `text` whole, or its first PREVIEW_TEXT_CHARS characters and a line saying how many more. */
export function boundedText(text: string, max = PREVIEW_TEXT_CHARS): string {
  const chars = [...text];
  if (chars.length <= max) return text;
  return `${chars.slice(0, max).join('')}\n… ${chars.length - max} more characters`;
}

const quoted = (text: string, max = 60) => {
  const chars = [...text.replace(/\s+/g, ' ').trim()];
  return JSON.stringify(chars.length > max ? `${chars.slice(0, max).join('')}…` : chars.join(''));
};

/** The note, when it lies in the project granted to this connection for `capability`. */
async function grantedNote(
  rt: NotesRuntime,
  connection: Connection,
  capability: string,
  documentID: string,
): Promise<NoteDocument | null> {
  const kernel = rt.kernel();
  const grant = await kernel.consent.find(connection.id, rt.mount, capability);
  const projectID = grant?.resource?.id;
  if (!projectID) return null;
  const doc = await kernel.store.read((tx) => getDocument(tx, documentID));
  return doc && doc.projectID === projectID ? doc : null;
}

const revisionOf = (doc: NoteDocument) => `revision ${doc.revision}`;

/** The policy of `append_text`: subject, observed revision and preview. */
export function appendPolicy(rt: NotesRuntime): CallPolicySpec<AppendText> {
  return {
    subject: ({ documentID }) => `note ${documentID}`,
    observes: async ({ documentID }, connection) => {
      const doc = await grantedNote(rt, connection, 'write', documentID);
      return doc ? revisionOf(doc) : undefined;
    },
    preview: async (input, connection): Promise<Preview> => {
      const doc = await grantedNote(rt, connection, 'write', input.documentID);
      const title = doc ? doc.title : `document ${input.documentID}`;
      return {
        summary: `append ${quoted(input.text)} to "${title}"${doc ? ` (${revisionOf(doc)})` : ''}`,
        title,
        ...(doc ? { revision: doc.revision } : {}),
        expectedVersion: input.expectedVersion,
        text: boundedText(input.text),
      };
    },
  };
}

/** The policy of `annotate_pdf`: subject, observed revision and preview. */
export function annotatePolicy(rt: NotesRuntime): CallPolicySpec<Annotate> {
  return {
    subject: ({ query }) => `note ${query.documentID}`,
    observes: async ({ query }, connection) => {
      const doc = await grantedNote(rt, connection, 'pdfAnnotate', query.documentID);
      return doc ? revisionOf(doc) : undefined;
    },
    preview: async (input, connection): Promise<Preview> => {
      const q = input.query;
      const doc = await grantedNote(rt, connection, 'pdfAnnotate', q.documentID);
      const title = doc ? doc.title : `document ${q.documentID}`;
      const what =
        input.kind === 'comment' ? `comment ${quoted(input.comment)}` : `${input.kind} text`;
      return {
        summary: `${what} on PDF page ${q.pageIndex + 1} of "${title}"${doc ? ` (${revisionOf(doc)})` : ''}`,
        title,
        ...(doc ? { revision: doc.revision } : {}),
        annotation: input.kind,
        pdfPage: q.pageIndex + 1,
        ...(input.comment ? { comment: boundedText(input.comment) } : {}),
      };
    },
  };
}
