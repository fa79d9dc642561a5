/** The lists the scenes overview renders from fetched data: engines, pipeline steps, project cards, page thumbnails. */
import type { Scene } from '../../../../doors/scene/model/model.js';
import { objectUrl, request } from '../../api.js';
import { busy, h, onOwner } from '../../dom.js';
import { showError } from '../../errors.js';
import { href } from '../../router.js';
import type { Engine, ProjectEntry } from './scene-project-data.js';

export function engineItems(engines: Engine[]): HTMLElement[] {
  return engines.map((e) =>
    h(
      'li',
      { 'data-engine': e.id },
      h('strong', {}, e.name),
      ` (${e.id}) · needs ${e.needs.join(', ') || 'nothing'} · produces ${e.produces.join(', ')}`,
    ),
  );
}

/** The pipeline's step checkboxes, one per engine, inside their legend. */
export function stepChoices(engineIds: string[]): HTMLElement[] {
  return [
    h('legend', {}, 'Steps'),
    ...engineIds.map((id) =>
      h(
        'label',
        { class: 'check', for: `step-${id}` },
        h('input', { type: 'checkbox', id: `step-${id}`, value: id, name: 'steps' }),
        id,
      ),
    ),
  ];
}

/** One card per project; the open one's button stays focusable but says it is open already. */
export function projectCards(projects: ProjectEntry[], reload: () => Promise<void>): HTMLElement[] {
  return projects.map((p) => {
    const open = h(
      'button',
      { type: 'button', 'aria-label': `Open ${p.name}` },
      p.current ? 'Open now' : 'Open',
    );
    if (p.current) open.setAttribute('aria-disabled', 'true');
    else
      onOwner(
        open,
        'click',
        () =>
          void busy(open, async () => {
            try {
              await request('PUT', 'projects/current', { body: { id: p.id } });
              await reload();
            } catch (err) {
              showError(err, 'Could not open the project');
            }
          }),
      );
    return h(
      'li',
      { class: 'card', 'data-project-id': p.id },
      h('h3', {}, p.name),
      h('p', { class: 'meta' }, p.path),
      open,
    );
  });
}

/**
 * A linked thumbnail per page. Each image's object URL is pushed to `urls`
 * once it arrives, so the caller can revoke it when the list is redrawn.
 */
/**
 * Thumbnails by page and image: a page whose images did not change keeps
 * its picture while the list is redrawn (a pipeline redraws it after every
 * batch), so nothing blinks blank; a changed page fetches its new one.
 */
export interface ThumbnailCache {
  /** The object URL for `key`, fetched from `path` once. */
  url(key: string, path: string): Promise<string>;
  /** The URL shown last for this page, while its new one loads. */
  shown(pageId: string): string | undefined;
  /** Records the URL now shown for a page. */
  show(pageId: string, url: string): void;
  /** Frees the URLs of keys left out of this redraw and the one before. */
  keepOnly(keep: ReadonlySet<string>): void;
  clear(): void;
}

export function createThumbnailCache(): ThumbnailCache {
  const urls = new Map<string, Promise<string>>();
  const seen = new Map<string, number>();
  const shownByPage = new Map<string, string>();
  let generation = 0;
  const free = (key: string) => {
    void urls.get(key)?.then(
      (u) => URL.revokeObjectURL(u),
      () => undefined,
    );
    urls.delete(key);
    seen.delete(key);
  };
  return {
    url(key, path) {
      let u = urls.get(key);
      if (!u) {
        u = objectUrl(path);
        urls.set(key, u);
        u.catch(() => urls.delete(key));
      }
      seen.set(key, generation);
      return u;
    },
    shown: (pageId) => shownByPage.get(pageId),
    show: (pageId, url) => void shownByPage.set(pageId, url),
    keepOnly(keep) {
      // A page's old picture stays valid one redraw longer: it is shown until the new one loads.
      for (const key of keep) seen.set(key, generation);
      for (const [key, at] of [...seen]) if (at < generation - 1) free(key);
      generation++;
    },
    clear() {
      for (const key of [...urls.keys()]) free(key);
      shownByPage.clear();
    },
  };
}

export function pageThumbnails(scene: Scene, cache: ThumbnailCache): HTMLElement[] {
  const keys = new Set<string>();
  const items = scene.pages.map((p, i) => {
    const img = h('img', { alt: '', width: 160 });
    const blobs = p.nodes.flatMap((n) => ('image' in n.kind ? [n.kind.image.blob] : []));
    const hasImage = blobs.length > 0;
    if (hasImage) {
      const key = `${p.id}:${blobs.join(',')}`;
      keys.add(key);
      const before = cache.shown(p.id);
      if (before) img.src = before;
      void cache
        .url(key, `pages/${encodeURIComponent(p.id)}/thumbnail`)
        .then((u) => {
          img.src = u;
          cache.show(p.id, u);
        })
        .catch(() => {
          if (!before) img.remove();
        });
    }
    const texts = p.nodes.filter((n) => 'text' in n.kind).length;
    return h(
      'li',
      { 'data-page-id': p.id },
      h(
        'a',
        { class: 'thumb', href: href('scenes', 'page', p.id) },
        hasImage ? img : null,
        `${i + 1}. ${p.name}`,
        h('span', { class: 'meta' }, ` · ${texts} text regions`),
      ),
    );
  });
  cache.keepOnly(keys);
  if (!scene.pages.length)
    return [h('li', { class: 'empty' }, 'No pages yet; add page images below.')];
  return items;
}
