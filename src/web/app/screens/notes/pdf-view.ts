/**
 * A PDF surface's page as the owner sees it: the annotated PDF (downloaded
 * from the notes door) drawn by pdf.js, with every annotation the PDF itself
 * carries outlined over the page and listed beside it, and a download of the
 * file. It reloads when an agent writes to notes.
 */
import { objectUrl, request, saveUrl } from '../../api.js';
import { busy, fill, h } from '../../dom.js';
import { showError } from '../../errors.js';
import { live, subscribe } from '../../live.js';
import { href } from '../../router.js';
import { openPdf } from '../../pdf.js';
import type { Screen } from '../screen.js';

interface PdfAnnotation {
  subtype: string;
  rect: number[];
  contentsObj?: { str?: string };
  contents?: string;
}

const KIND: Record<string, string> = {
  Highlight: 'Highlight',
  Underline: 'Underline',
  Text: 'Comment',
  FreeText: 'Comment',
};

type Viewport = {
  width: number;
  height: number;
  convertToViewportRectangle(rect: number[]): number[];
};

/** Each annotation outlined over the page (as a share of its size) and listed beside it. */
function showAnnotations(
  overlays: HTMLElement,
  list: HTMLElement,
  annotations: PdfAnnotation[],
  viewport: Viewport,
): void {
  fill(
    overlays,
    ...annotations.map((a, i) => {
      const [x1 = 0, y1 = 0, x2 = 0, y2 = 0] = viewport.convertToViewportRectangle(a.rect);
      const text = a.contentsObj?.str ?? a.contents ?? '';
      const box = h('span', {
        class: 'overlay',
        'data-source': 'pdf',
        'data-kind': a.subtype,
        title: `${KIND[a.subtype]} ${i + 1}${text ? `: ${text}` : ''}`,
      });
      box.style.left = `${(Math.min(x1, x2) / viewport.width) * 100}%`;
      box.style.top = `${(Math.min(y1, y2) / viewport.height) * 100}%`;
      box.style.width = `${(Math.abs(x2 - x1) / viewport.width) * 100}%`;
      box.style.height = `${(Math.abs(y2 - y1) / viewport.height) * 100}%`;
      return box;
    }),
  );
  fill(
    list,
    ...(annotations.length
      ? annotations.map((a) => {
          const text = a.contentsObj?.str ?? a.contents ?? '';
          return h(
            'li',
            { 'data-kind': a.subtype },
            `${KIND[a.subtype]}${text ? `: ${text}` : ''}`,
          );
        })
      : [h('li', { class: 'empty' }, 'No annotations on this page.')]),
  );
}

export const pdfScreen: Screen = (root, route) => {
  const [, documentID = '', surfaceID = ''] = route.params;
  const pageIndex = Math.max(0, Number(route.query.get('page') ?? 0) || 0);
  const path = `notes/documents/${encodeURIComponent(documentID)}/pdfs/${encodeURIComponent(surfaceID)}`;
  const heading = h('h1', { tabindex: '-1' }, `PDF page ${pageIndex + 1}`);
  const canvas = h('canvas', { role: 'img', 'aria-label': `Page ${pageIndex + 1} of the PDF` });
  const overlays = h('div', { class: 'overlays' });
  const stage = h('div', { class: 'stage', id: 'pdf-stage' }, canvas, overlays);
  const list = h('ol', {
    class: 'annots',
    id: 'pdf-annotations',
    'aria-label': 'Annotations on this page',
  });
  const status = h('p', { class: 'meta', role: 'status' }, 'Loading the PDF…');
  const nav = h('nav', { class: 'row', 'aria-label': 'Pages' });
  const save = h('button', { type: 'button' }, 'Download annotated PDF');
  let generation = 0;

  save.addEventListener(
    'click',
    () =>
      void busy(save, async () => {
        try {
          saveUrl(await objectUrl(path), `${surfaceID}.pdf`);
        } catch (e) {
          showError(e, 'Download failed');
        }
      }),
  );

  const render = async () => {
    const mine = ++generation;
    try {
      const bytes = await (await request('GET', path)).arrayBuffer();
      const pdf = await openPdf(bytes);
      if (mine !== generation) return;
      const count = pdf.numPages;
      const index = Math.min(pageIndex, count - 1);
      const page = await pdf.getPage(index + 1);
      const viewport = page.getViewport({ scale: 1.5 });
      canvas.width = Math.floor(viewport.width);
      canvas.height = Math.floor(viewport.height);
      await page.render({ canvas, canvasContext: canvas.getContext('2d')!, viewport }).promise;
      const annotations = ((await page.getAnnotations()) as PdfAnnotation[]).filter(
        (a) => a.subtype in KIND,
      );
      if (mine !== generation) return;
      showAnnotations(overlays, list, annotations, viewport);
      heading.textContent = `PDF page ${index + 1} of ${count}`;
      status.textContent = `${annotations.length} annotation${annotations.length === 1 ? '' : 's'} on this page.`;
      fill(
        nav,
        index > 0
          ? h(
              'a',
              {
                class: 'button',
                href: `${href('notes', 'pdf', documentID, surfaceID)}?page=${index - 1}`,
              },
              'Previous page',
            )
          : null,
        index < count - 1
          ? h(
              'a',
              {
                class: 'button',
                href: `${href('notes', 'pdf', documentID, surfaceID)}?page=${index + 1}`,
              },
              'Next page',
            )
          : null,
        save,
      );
      await pdf.destroy();
    } catch (e) {
      status.textContent = 'The PDF could not be shown.';
      showError(e, 'Could not load the PDF');
    }
  };

  fill(
    root,
    h('p', {}, h('a', { href: href('notes', 'doc', documentID) }, '← Back to the document')),
    heading,
    nav,
    status,
    h(
      'div',
      { class: 'split' },
      stage,
      h(
        'section',
        { 'aria-labelledby': 'annots-title' },
        h('h2', { id: 'annots-title' }, 'Annotations'),
        list,
      ),
    ),
  );
  nav.append(save);
  void render();
  return subscribe('event', () => {
    const e = live().lastEvent;
    const entry =
      e?.event === 'auditRecorded' ? (e.entry as { door?: string; result?: string }) : null;
    if (entry?.door === 'notes' && entry.result === 'ok') void render();
  });
};
