/**
 * OCR languages and their tesseract models, loaded offline from the
 * `@tesseract.js-data/*` npm packages (`cacheMethod: 'none'`: nothing is
 * fetched or written at run time). Japanese has a vertical model
 * (`jpn_vert`), and so has Traditional Chinese (`zh-Hant`: `chi_tra`,
 * `chi_tra_vert`); Simplified Chinese and Korean are read with their horizontal model in
 * both directions (no vertical data package exists for them on npm).
 * Workers are created on first use and kept for one engine run.
 */
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { Worker } from 'tesseract.js';
import type { SourceLanguage } from '../model/model.js';

export type { SourceLanguage };

export type Direction = 'horizontal' | 'vertical';

const MODELS: Record<SourceLanguage, Record<Direction, string>> = {
  en: { horizontal: 'eng', vertical: 'eng' },
  ja: { horizontal: 'jpn', vertical: 'jpn_vert' },
  zh: { horizontal: 'chi_sim', vertical: 'chi_sim' },
  'zh-Hant': { horizontal: 'chi_tra', vertical: 'chi_tra_vert' },
  ko: { horizontal: 'kor', vertical: 'kor' },
};

/** Languages whose manga/comics are usually lettered vertically, read right to left. */
export const VERTICAL_FIRST: ReadonlySet<SourceLanguage> = new Set(['ja', 'zh', 'zh-Hant']);

export const modelFor = (lang: SourceLanguage, direction: Direction) => MODELS[lang][direction];

/** Folder holding `<model>.traineddata.gz` from its npm data package. */
export function modelPath(model: string): string {
  const require = createRequire(import.meta.url);
  return join(
    dirname(require.resolve(`@tesseract.js-data/${model}/package.json`)),
    '4.0.0_best_int',
  );
}

/** Page segmentation modes used here (tesseract's numbering). */
export const PSM = { auto: '3', block: '6', verticalBlock: '5', sparse: '11' } as const;

export interface OcrWorkers {
  get(model: string): Promise<Worker>;
  close(): Promise<void>;
}

export function ocrWorkers(): OcrWorkers {
  const workers = new Map<string, Promise<Worker>>();
  return {
    get(model) {
      let w = workers.get(model);
      if (!w) {
        // tesseract.js is loaded with the first page read, not at start-up.
        w = import('tesseract.js').then(({ createWorker, OEM }) =>
          createWorker(model, OEM.LSTM_ONLY, {
            langPath: modelPath(model),
            gzip: true,
            cacheMethod: 'none',
          }),
        );
        workers.set(model, w);
      }
      return w;
    },
    async close() {
      const all = [...workers.values()];
      workers.clear();
      await Promise.all(all.map(async (w) => (await w.catch(() => null))?.terminate()));
    },
  };
}
