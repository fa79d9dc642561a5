/**
 * One scene page: its image (rendered, else inpainted, else source) with an
 * outline over every text region; choosing one shows its text and
 * translation. The same regions are listed as a table for keyboard and
 * screen-reader use. Undo/redo show the epoch; the view follows
 * `sceneChanged` live.
 */
import type { Node, Page, Scene } from '../../../../doors/scene/model/model.js';
import { get, objectUrl } from '../../api.js';
import { fill, h, labelCells } from '../../dom.js';
import { showError } from '../../errors.js';
import { coalesced } from '../../coalesce.js';
import { live, subscribe } from '../../live.js';
import { historyControls } from './scene-history.js';
import type { Screen } from '../screen.js';

const PREFERRED = ['rendered', 'inpainted', 'source'] as const;

type TextNode = Node & { kind: { text: { text?: string; translation?: string } } };
const isText = (n: Node): n is TextNode => 'text' in n.kind;

/** The page's image of each role it has, most finished first. */
function imagesOf(page: Page): { role: string; blob: string }[] {
  const out: { role: string; blob: string }[] = [];
  for (const role of PREFERRED)
    for (const n of page.nodes)
      if ('image' in n.kind && n.kind.image.role === role)
        out.push({ role, blob: n.kind.image.blob });
  return out;
}

const COLUMNS = ['#', 'Text', 'Translation'] as const;

/** What the detail pane says of a chosen region: its text and translation. */
const detailOf = (n: TextNode, index: number) => [
  h('h3', {}, `Region ${index + 1}`),
  h('p', {}, h('strong', {}, 'Text: '), h('span', { class: 'node-text' }, n.kind.text.text ?? '—')),
  h(
    'p',
    {},
    h('strong', {}, 'Translation: '),
    h('span', { class: 'node-translation' }, n.kind.text.translation ?? '—'),
  ),
];

/** Each text region as a button over the image (a share of the page) and as a row of the table. */
function showRegions(
  page: Page,
  texts: TextNode[],
  overlays: HTMLElement,
  rows: HTMLElement,
  show: (n: TextNode, index: number) => void,
): void {
  fill(
    overlays,
    ...texts.map((n, i) => {
      const t = n.transform;
      const label = `Region ${i + 1}: ${n.kind.text.text ?? 'no text'}${n.kind.text.translation ? ` → ${n.kind.text.translation}` : ''}`;
      const b = h('button', {
        type: 'button',
        class: 'overlay',
        'data-node-id': n.id,
        'aria-pressed': 'false',
        'aria-label': label,
        title: label,
      });
      b.style.left = `${(t.x / page.width) * 100}%`;
      b.style.top = `${(t.y / page.height) * 100}%`;
      b.style.width = `${(t.width / page.width) * 100}%`;
      b.style.height = `${(t.height / page.height) * 100}%`;
      b.addEventListener('click', () => show(n, i));
      return b;
    }),
  );
  fill(
    rows,
    ...texts.map((n, i) =>
      labelCells(
        h(
          'tr',
          { 'data-node-id': n.id },
          h('td', {}, String(i + 1)),
          h('td', {}, n.kind.text.text ?? '—'),
          h('td', { class: 'translation' }, n.kind.text.translation ?? '—'),
        ),
        COLUMNS,
      ),
    ),
  );
}

export const scenePageScreen: Screen = (root, route) => {
  const id = route.params[1]!;
  const heading = h('h1', { tabindex: '-1' }, 'Page');
  const img = h('img', { alt: '' });
  const overlays = h('div', { class: 'overlays' });
  const stage = h('div', { class: 'stage', id: 'scene-stage' }, img, overlays);
  const detail = h(
    'div',
    { id: 'node-detail', 'aria-live': 'polite' },
    h('p', { class: 'empty' }, 'Choose a text region to see its text and translation.'),
  );
  const rows = h('tbody', { id: 'text-nodes' });
  const layer = h('select', { id: 'scene-layer' });
  layer.addEventListener('change', () => void load());
  let selected: string | null = null;
  let url: string | null = null;
  let blob: string | null = null;

  const history = historyControls(() => void load());

  const show = (n: TextNode, index: number) => {
    selected = n.id;
    for (const b of overlays.querySelectorAll<HTMLElement>('.overlay'))
      b.setAttribute('aria-pressed', String(b.dataset.nodeId === n.id));
    fill(detail, ...detailOf(n, index));
  };

  const load = coalesced(async () => {
    try {
      const [{ scene }, meta] = await Promise.all([
        get<{ epoch: number; scene: Scene }>('scene.json'),
        get<{ epoch: number | null; canUndo: boolean; canRedo: boolean; project: null }>('meta'),
      ]);
      history.update(meta);
      const index = scene.pages.findIndex((p) => p.id === id);
      const page = scene.pages[index];
      if (!page) {
        heading.textContent = 'Page not found';
        fill(
          detail,
          h(
            'p',
            { class: 'empty' },
            'This page is not in the open project (it may have been removed or undone).',
          ),
        );
        overlays.replaceChildren();
        rows.replaceChildren();
        return;
      }
      heading.textContent = `Page ${index + 1}: ${page.name}`;
      const images = imagesOf(page);
      const wanted = layer.value;
      fill(layer, ...images.map((i) => h('option', { value: i.role }, i.role)));
      layer.value = images.some((i) => i.role === wanted) ? wanted : (images[0]?.role ?? '');
      const next = images.find((i) => i.role === layer.value)?.blob ?? null;
      if (next !== blob) {
        blob = next;
        if (url) URL.revokeObjectURL(url);
        url = next ? await objectUrl(`blobs/${next}`) : null;
        if (url) img.src = url;
        else img.removeAttribute('src');
        img.alt = `Page ${index + 1}, ${layer.value} image`;
      }
      const texts = page.nodes.filter(isText);
      showRegions(page, texts, overlays, rows, show);
      const current = texts.findIndex((n) => n.id === selected);
      if (current >= 0) show(texts[current]!, current);
    } catch (e) {
      showError(e, 'Could not load the page');
    }
  });

  fill(
    root,
    h('p', {}, h('a', { href: '#/scenes' }, '← All pages')),
    heading,
    h('div', { class: 'row' }, history.el, h('label', { for: 'scene-layer' }, 'Image', layer)),
    h(
      'div',
      { class: 'split' },
      stage,
      h(
        'section',
        { 'aria-labelledby': 'detail-title' },
        h('h2', { id: 'detail-title' }, 'Selected region'),
        detail,
      ),
    ),
    h(
      'section',
      { 'aria-labelledby': 'regions-title' },
      h('h2', { id: 'regions-title' }, 'Text regions'),
      h(
        'div',
        { class: 'table-wrap' },
        h(
          'table',
          { class: 'stack', 'aria-labelledby': 'regions-title' },
          h('thead', {}, h('tr', {}, ...COLUMNS.map((c) => h('th', { scope: 'col' }, c)))),
          rows,
        ),
      ),
    ),
  );
  void load();
  const off = subscribe('event', () => {
    if (live().lastEvent?.event === 'sceneChanged') void load();
  });
  return () => {
    off();
    if (url) URL.revokeObjectURL(url);
  };
};
