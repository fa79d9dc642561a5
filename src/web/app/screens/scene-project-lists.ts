/** The lists the scenes overview renders from fetched data: engines, pipeline steps, project cards, page thumbnails. */
import type { Scene } from '../../../doors/scene/model.js';
import { objectUrl, request } from '../api.js';
import { busy, h } from '../dom.js';
import { showError } from '../errors.js';
import { href } from '../router.js';
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
      open.addEventListener(
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
export function pageThumbnails(scene: Scene, urls: string[]): HTMLElement[] {
  if (!scene.pages.length)
    return [h('li', { class: 'empty' }, 'No pages yet; add page images below.')];
  return scene.pages.map((p, i) => {
    const img = h('img', { alt: '', width: 160 });
    const hasImage = p.nodes.some((n) => 'image' in n.kind);
    if (hasImage)
      void objectUrl(`pages/${encodeURIComponent(p.id)}/thumbnail`)
        .then((u) => {
          urls.push(u);
          img.src = u;
        })
        .catch(() => img.remove());
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
}
