/**
 * Scenes (spec/scene.md): open or create a project, upload pages, page
 * thumbnails, undo/redo with the epoch, the engine list, starting a pipeline
 * with live progress per job, and export. A page opens at
 * `#/scenes/page/<id>` with its node overlays.
 *
 * The overview's parts live beside it: `scene-project-forms.ts` (forms and
 * their actions), `scene-project-lists.ts` (lists drawn from data),
 * `scene-project-data.ts` (what is fetched).
 */
import { coalesced } from '../../coalesce.js';
import { fill, h } from '../../dom.js';
import { showError } from '../../errors.js';
import { live, subscribe } from '../../live.js';
import { jobList } from '../jobs.js';
import { historyControls } from './scene-history.js';
import { scenePageScreen } from './scene-page.js';
import { fetchOverview, fetchScene } from './scene-project-data.js';
import {
  closeProjectButton,
  createProjectForm,
  exportForm,
  pipelineForm,
  uploadPagesForm,
} from './scene-project-forms.js';
import {
  createThumbnailCache,
  engineItems,
  pageThumbnails,
  projectCards,
  stepChoices,
} from './scene-project-lists.js';
import type { Screen } from '../screen.js';

function section(id: string, title: string, ...children: (HTMLElement | null)[]): HTMLElement {
  return h('section', { 'aria-labelledby': id }, h('h2', { id }, title), ...children);
}

const projectScreen: Screen = (root) => {
  const status = h('p', { class: 'meta', id: 'scene-project' });
  const projects = h('ul', { class: 'cards', id: 'scene-projects' });
  const engines = h('ul', { id: 'engines' });
  const thumbs = h('ul', { class: 'grid', id: 'thumbnails', 'aria-label': 'Pages' });
  const opened = h('div', {});
  const thumbnails = createThumbnailCache();
  const jobs = jobList((j) => j.door === 'scene');
  let enginesLoaded = false;

  const history = historyControls(() => void load());
  let pageIds: string[] = [];
  const pipeline = pipelineForm(() => pageIds);

  const load = coalesced(async (): Promise<void> => {
    try {
      const overview = await fetchOverview(!enginesLoaded);
      if (overview.engines) {
        enginesLoaded = true;
        fill(engines, ...engineItems(overview.engines));
        fill(pipeline.steps, ...stepChoices(overview.engines.map((e) => e.id)));
      }
      const { meta } = overview;
      status.textContent = meta.project ? `Open: ${meta.project.name}` : 'No project is open.';
      history.update(meta);
      fill(projects, ...projectCards(overview.projects, load));
      opened.hidden = !meta.project;
      if (!meta.project) return;
      const scene = await fetchScene();
      pageIds = scene.pages.map((p) => p.id);
      fill(thumbs, ...pageThumbnails(scene, thumbnails));
    } catch (err) {
      showError(err, 'Could not load the scene');
    }
  });

  fill(
    root,
    h('h1', { tabindex: '-1' }, 'Scenes'),
    status,
    section('scene-projects-title', 'Projects', projects, createProjectForm(load)),
    opened,
    section('engines-title', 'Engines', engines),
  );
  fill(
    opened,
    section('pages-title', 'Pages', history.el, thumbs, uploadPagesForm(load)),
    section('pipeline-title', 'Pipeline', pipeline.el, jobs.el),
    section(
      'export-title',
      'Export and close',
      exportForm(),
      h('div', { class: 'row' }, closeProjectButton(load)),
    ),
  );
  void load();
  const off = subscribe('event', () => {
    const e = live().lastEvent;
    if (e?.event === 'sceneChanged' || e?.event === 'snapshot') void load();
  });
  return () => {
    off();
    jobs.stop();
    thumbnails.clear();
  };
};

export const scenesScreen: Screen = (root, route) =>
  route.params[0] === 'page' && route.params[1]
    ? scenePageScreen(root, route)
    : projectScreen(root, route);
