/**
 * Scenes (spec/scene.md): open or create a project, upload pages, page
 * thumbnails, undo/redo with the epoch, the engine list, starting a pipeline
 * with live progress per job, and export. A page opens at
 * `#/scenes/page/<id>` with its node overlays.
 */
import type { Scene } from '../../../doors/scene/model.js';
import { get, objectUrl, post, request, saveUrl, del } from '../api.js';
import { busy, fill, h } from '../dom.js';
import { showError } from '../errors.js';
import { live, subscribe } from '../live.js';
import { href } from '../router.js';
import { jobList } from './jobs.js';
import { historyControls, type HistoryMeta } from './scene-history.js';
import { scenePageScreen } from './scene-page.js';
import type { Screen } from './screen.js';

interface ProjectInfo {
  id?: string;
  name: string;
  path: string;
}
interface Meta extends HistoryMeta {
  project: ProjectInfo | null;
}
interface Engine {
  id: string;
  name: string;
  needs: string[];
  produces: string[];
}

const projectScreen: Screen = (root) => {
  const status = h('p', { class: 'meta', id: 'scene-project' });
  const projects = h('ul', { class: 'cards', id: 'scene-projects' });
  const engines = h('ul', { id: 'engines' });
  const thumbs = h('ul', { class: 'grid', id: 'thumbnails', 'aria-label': 'Pages' });
  const opened = h('div', {});
  const urls: string[] = [];
  const jobs = jobList((j) => j.door === 'scene');
  let loaded = false;
  let engineIds: string[] = [];

  const history = historyControls(() => void load());

  const name = h('input', {
    id: 'scene-new-name',
    type: 'text',
    required: true,
    maxlength: 200,
    autocomplete: 'off',
  });
  const create = h('button', { type: 'submit' }, 'Create and open');
  const createForm = h(
    'form',
    { class: 'row' },
    h('label', { for: 'scene-new-name' }, 'New project name', name),
    create,
  );
  createForm.addEventListener('submit', (e) => {
    e.preventDefault();
    void busy(create, async () => {
      try {
        await post('projects', { name: name.value.trim() });
        name.value = '';
        await load();
      } catch (err) {
        showError(err, 'Could not create the project');
      }
    });
  });

  const files = h('input', {
    id: 'scene-pages',
    type: 'file',
    accept: 'image/png,image/jpeg',
    multiple: true,
  });
  const upload = h('button', { type: 'submit' }, 'Add pages');
  const uploadForm = h(
    'form',
    { class: 'row' },
    h('label', { for: 'scene-pages' }, 'Page images', files),
    upload,
  );
  uploadForm.addEventListener('submit', (e) => {
    e.preventDefault();
    const chosen = Array.from(files.files ?? []);
    if (!chosen.length) return showError('Choose one or more images first.', 'Add pages');
    void busy(upload, async () => {
      const form = new FormData();
      for (const f of chosen) form.append('file', f, f.name);
      try {
        await request('POST', 'pages', { form });
        files.value = '';
        await load();
      } catch (err) {
        showError(err, 'Could not add the pages');
      }
    });
  });

  const steps = h('fieldset', { id: 'pipeline-steps' });
  const language = h('input', {
    id: 'pipeline-language',
    type: 'text',
    value: 'English',
    autocomplete: 'off',
  });
  const run = h('button', { type: 'submit', class: 'primary' }, 'Start pipeline');
  const runForm = h(
    'form',
    { class: 'stack-form' },
    steps,
    h(
      'div',
      { class: 'row' },
      h('label', { for: 'pipeline-language' }, 'Target language', language),
      run,
    ),
  );
  runForm.addEventListener('submit', (e) => {
    e.preventDefault();
    const chosen = Array.from(steps.querySelectorAll<HTMLInputElement>('input:checked')).map(
      (c) => c.value,
    );
    if (!chosen.length) return showError('Choose at least one step.', 'Pipeline');
    void busy(run, async () => {
      try {
        await post('pipelines', {
          steps: chosen,
          ...(language.value.trim() ? { targetLanguage: language.value.trim() } : {}),
        });
      } catch (err) {
        showError(err, 'Could not start the pipeline');
      }
    });
  });

  const format = h(
    'select',
    { id: 'export-format' },
    ...[
      ['khr', 'Project archive (.khr)'],
      ['rendered', 'Rendered pages (PNG)'],
      ['inpainted', 'Inpainted pages (PNG)'],
      ['pdf', 'PDF of rendered pages'],
    ].map(([v, l]) => h('option', { value: v }, l)),
  );
  const exportButton = h('button', { type: 'submit' }, 'Export');
  const exportForm = h(
    'form',
    { class: 'row' },
    h('label', { for: 'export-format' }, 'Format', format),
    exportButton,
  );
  exportForm.addEventListener('submit', (e) => {
    e.preventDefault();
    void busy(exportButton, async () => {
      try {
        const res = await request('POST', 'projects/current/export', {
          body: { format: format.value },
        });
        const named = /filename="([^"]+)"/.exec(res.headers.get('content-disposition') ?? '')?.[1];
        saveUrl(
          URL.createObjectURL(await res.blob()),
          named ??
            `export.${format.value === 'khr' ? 'khr' : format.value === 'pdf' ? 'pdf' : 'zip'}`,
        );
      } catch (err) {
        showError(err, 'Export failed');
      }
    });
  });

  const closeButton = h('button', { type: 'button' }, 'Close project');
  closeButton.addEventListener(
    'click',
    () =>
      void busy(closeButton, async () => {
        try {
          await del('projects/current');
          await load();
        } catch (err) {
          showError(err, 'Could not close the project');
        }
      }),
  );

  const load = async () => {
    try {
      const [meta, list, eng] = await Promise.all([
        get<Meta>('meta'),
        get<{ projects: (ProjectInfo & { id: string; current: boolean })[] }>('projects'),
        loaded ? Promise.resolve(null) : get<{ engines: Engine[] }>('engines'),
      ]);
      if (eng) {
        loaded = true;
        engineIds = eng.engines.map((e) => e.id);
        fill(
          engines,
          ...eng.engines.map((e) =>
            h(
              'li',
              { 'data-engine': e.id },
              h('strong', {}, e.name),
              ` (${e.id}) · needs ${e.needs.join(', ') || 'nothing'} · produces ${e.produces.join(', ')}`,
            ),
          ),
        );
        fill(
          steps,
          h('legend', {}, 'Steps'),
          ...engineIds.map((id) =>
            h(
              'label',
              { class: 'check', for: `step-${id}` },
              h('input', { type: 'checkbox', id: `step-${id}`, value: id, name: 'steps' }),
              id,
            ),
          ),
        );
      }
      status.textContent = meta.project ? `Open: ${meta.project.name}` : 'No project is open.';
      history.update(meta);
      fill(
        projects,
        ...list.projects.map((p) => {
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
                    await load();
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
        }),
      );
      opened.hidden = !meta.project;
      if (!meta.project) return;
      const { scene } = await get<{ epoch: number; scene: Scene }>('scene.json');
      for (const u of urls.splice(0)) URL.revokeObjectURL(u);
      fill(
        thumbs,
        ...(scene.pages.length
          ? scene.pages.map((p, i) => {
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
            })
          : [h('li', { class: 'empty' }, 'No pages yet; add page images below.')]),
      );
    } catch (err) {
      showError(err, 'Could not load the scene');
    }
  };

  fill(
    root,
    h('h1', { tabindex: '-1' }, 'Scenes'),
    status,
    h(
      'section',
      { 'aria-labelledby': 'scene-projects-title' },
      h('h2', { id: 'scene-projects-title' }, 'Projects'),
      projects,
      createForm,
    ),
    opened,
    h(
      'section',
      { 'aria-labelledby': 'engines-title' },
      h('h2', { id: 'engines-title' }, 'Engines'),
      engines,
    ),
  );
  fill(
    opened,
    h(
      'section',
      { 'aria-labelledby': 'pages-title' },
      h('h2', { id: 'pages-title' }, 'Pages'),
      history.el,
      thumbs,
      uploadForm,
    ),
    h(
      'section',
      { 'aria-labelledby': 'pipeline-title' },
      h('h2', { id: 'pipeline-title' }, 'Pipeline'),
      runForm,
      jobs.el,
    ),
    h(
      'section',
      { 'aria-labelledby': 'export-title' },
      h('h2', { id: 'export-title' }, 'Export and close'),
      exportForm,
      h('div', { class: 'row' }, closeButton),
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
    for (const u of urls) URL.revokeObjectURL(u);
  };
};

export const scenesScreen: Screen = (root, route) =>
  route.params[0] === 'page' && route.params[1]
    ? scenePageScreen(root, route)
    : projectScreen(root, route);
