/**
 * The engine registry and pipeline planning (spec/scene.md "Pipeline").
 * Engines declare the artifacts they need and produce; a plan orders the
 * selected steps topologically (ties keep the caller's order) and is refused
 * before any job exists when a step is unknown, repeated, needs something
 * neither the scene nor an earlier step provides, or is an engine not
 * configured on this server (`unavailable`, naming the setting).
 */
import { AirlockError, type BlobStore } from '../../../kernel/index.js';
import type { Page } from '../model/model.js';
import type { Op } from '../model/ops.js';
import type { SourceLanguage } from './ocr-models.js';

export const ARTIFACTS = [
  'SourceImage',
  'TextBoxes',
  'OcrText',
  'Translations',
  'Inpainted',
  'FinalRender',
] as const;
export type Artifact = (typeof ARTIFACTS)[number];

export interface EngineInfo {
  id: string;
  name: string;
  needs: Artifact[];
  produces: Artifact[];
  /** Source languages the engine reads (OCR), when it depends on them. */
  languages?: string[];
}

export interface PipelineOptions {
  /** The language OCR reads (`en` when unset). */
  sourceLanguage?: SourceLanguage | undefined;
  targetLanguage?: string | undefined;
  systemPrompt?: string | undefined;
  defaultFont?: string | undefined;
  /** Limit text engines (llm, fill, renderer) to these text nodes. */
  textNodeIds?: string[] | undefined;
  /** The project's default font (`project.style.defaultFont`). */
  projectFont?: string | undefined;
}

export interface PageInput {
  page: Page;
  pageIndex: number;
  blobs: BlobStore;
  signal: AbortSignal;
  /** W3C trace headers for the page's outbound requests (the job's span); {} when not traced. */
  traceHeaders?: Record<string, string>;
  /** The scene's pages as they stand (for context: the text on neighbouring pages). */
  pages?: readonly Page[];
  /**
   * Says what the step left alone on this page and why (a `jobWarning`
   * whose `skipped` is the reason); the page is not failed by it.
   */
  skipped?(reason: SkipReason, message: string, where?: { textNodeId?: string }): void;
}

/** Why a step left a page or a text block alone (the `skipped` field of its jobWarning). */
export type SkipReason =
  | 'nothingToDo'
  | 'lowConfidence'
  | 'notTextLike'
  | 'tooLarge'
  | 'loneGlyph'
  | 'soundEffect'
  | 'untranslated'
  | 'merged';

/** One engine's work for one job: a batch of ops per page. */
export interface EngineRun {
  page(input: PageInput): Promise<Op[]>;
  close?(): Promise<void>;
}

export interface Engine extends EngineInfo {
  /** Artifacts used when present (not required): they order the steps, e.g. renderer after fill. */
  uses?: Artifact[];
  /**
   * What must be configured before this engine can run (a sentence naming
   * the setting), or null when it is ready; asked when a pipeline is planned,
   * so a run is refused before its job exists rather than failing each page.
   */
  unconfigured?(): string | null;
  start(options: PipelineOptions): Promise<EngineRun>;
}

export type EngineRegistry = ReadonlyMap<string, Engine>;

export const infoOf = ({ id, name, needs, produces, languages }: Engine): EngineInfo => ({
  id,
  name,
  needs,
  produces,
  ...(languages ? { languages } : {}),
});

/**
 * What a page already holds. A page text detection has run on (it has a
 * `segment` mask) and that holds no text node has every text artifact: no
 * text is an answer, and the later steps have nothing to do on it.
 */
export function artifactsOf(page: Page): Set<Artifact> {
  const have = new Set<Artifact>();
  const detected = page.nodes.some((n) => 'mask' in n.kind && n.kind.mask.role === 'segment');
  if (detected && !page.nodes.some((n) => 'text' in n.kind))
    for (const a of ['TextBoxes', 'OcrText', 'Translations'] as const) have.add(a);
  for (const node of page.nodes) {
    if ('image' in node.kind) {
      const role = node.kind.image.role;
      if (role === 'source') have.add('SourceImage');
      if (role === 'inpainted') have.add('Inpainted');
      if (role === 'rendered') have.add('FinalRender');
    } else if ('text' in node.kind) {
      have.add('TextBoxes');
      if (node.kind.text.text) have.add('OcrText');
      if (node.kind.text.translation) have.add('Translations');
    }
  }
  return have;
}

/** Orders and checks the steps; throws malformedRequest naming the offending step. */
export function planSteps(registry: EngineRegistry, steps: string[], pages: Page[]): Engine[] {
  const seen = new Set<string>();
  const chosen: Engine[] = [];
  const known = () => [...registry.keys()].join(', ');
  for (const id of steps) {
    const engine = registry.get(id);
    if (!engine)
      throw new AirlockError(
        'malformedRequest',
        `Unknown pipeline step '${id}'; the engines are: ${known()} (see list_engines).`,
        { field: 'steps', step: id },
      );
    if (seen.has(id))
      throw new AirlockError(
        'malformedRequest',
        `Pipeline step '${id}' is listed twice; list each engine once.`,
        { field: 'steps', step: id },
      );
    seen.add(id);
    chosen.push(engine);
  }
  // Kahn's algorithm; ties keep the order the caller gave.
  const ordered: Engine[] = [];
  const remaining = [...chosen];
  while (remaining.length) {
    const ready = remaining.findIndex(
      (e) =>
        !remaining.some(
          (other) =>
            other !== e && other.produces.some((a) => e.needs.includes(a) || !!e.uses?.includes(a)),
        ),
    );
    ordered.push(remaining.splice(ready < 0 ? 0 : ready, 1)[0]!);
  }
  const have = new Set<Artifact>();
  for (const page of pages) for (const a of artifactsOf(page)) have.add(a);
  for (const engine of ordered) {
    const missing = engine.needs.find((a) => !have.has(a));
    if (missing)
      throw new AirlockError(
        'malformedRequest',
        `Pipeline step '${engine.id}' needs ${missing}, which neither the scene nor an earlier step provides; add a step that produces it (see list_engines).`,
        { field: 'steps', step: engine.id, missing },
      );
    for (const a of engine.produces) have.add(a);
  }
  for (const engine of ordered) {
    const missing = engine.unconfigured?.();
    if (missing)
      throw new AirlockError(
        'unavailable',
        `Pipeline step '${engine.id}' cannot run here: ${missing}; then start the pipeline again, or leave the step out.`,
        { field: 'steps', step: engine.id },
      );
  }
  return ordered;
}
