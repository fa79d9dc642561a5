/**
 * pdf.js in the browser, loaded on demand from the server's copy of
 * `pdfjs-dist` (`/ui/vendor/pdfjs/…`): no CDN, and no eval (the page's CSP
 * forbids it, so `isEvalSupported` is off).
 */
import type * as PdfJs from 'pdfjs-dist';

const BASE = '/ui/vendor/pdfjs/';
let loading: Promise<typeof PdfJs> | null = null;

export function pdfjs(): Promise<typeof PdfJs> {
  loading ??= (async () => {
    const url = `${BASE}build/pdf.mjs`;
    const lib = (await import(url)) as typeof PdfJs;
    lib.GlobalWorkerOptions.workerSrc = `${BASE}build/pdf.worker.mjs`;
    return lib;
  })();
  return loading;
}

export async function openPdf(bytes: ArrayBuffer): Promise<PdfJs.PDFDocumentProxy> {
  const lib = await pdfjs();
  return lib.getDocument({
    data: new Uint8Array(bytes),
    isEvalSupported: false,
    standardFontDataUrl: `${BASE}standard_fonts/`,
    wasmUrl: `${BASE}wasm/`,
    verbosity: 0,
  }).promise;
}
