/**
 * The scenes overview's forms and their actions: create a project, add
 * pages, start a pipeline, export, close. Each action that changes what the
 * overview shows calls `reload` when it succeeds.
 */
import { del, post, request, saveUrl } from '../api.js';
import { busy, h } from '../dom.js';
import { showError } from '../errors.js';

type Reload = () => Promise<void>;

export function createProjectForm(reload: Reload): HTMLFormElement {
  const name = h('input', {
    id: 'scene-new-name',
    type: 'text',
    required: true,
    maxlength: 200,
    autocomplete: 'off',
  });
  const create = h('button', { type: 'submit' }, 'Create and open');
  const form = h(
    'form',
    { class: 'row' },
    h('label', { for: 'scene-new-name' }, 'New project name', name),
    create,
  );
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    void busy(create, async () => {
      try {
        await post('projects', { name: name.value.trim() });
        name.value = '';
        await reload();
      } catch (err) {
        showError(err, 'Could not create the project');
      }
    });
  });
  return form;
}

export function uploadPagesForm(reload: Reload): HTMLFormElement {
  const files = h('input', {
    id: 'scene-pages',
    type: 'file',
    accept: 'image/png,image/jpeg',
    multiple: true,
  });
  const upload = h('button', { type: 'submit' }, 'Add pages');
  const form = h(
    'form',
    { class: 'row' },
    h('label', { for: 'scene-pages' }, 'Page images', files),
    upload,
  );
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    const chosen = Array.from(files.files ?? []);
    if (!chosen.length) return showError('Choose one or more images first.', 'Add pages');
    void busy(upload, async () => {
      const body = new FormData();
      for (const f of chosen) body.append('file', f, f.name);
      try {
        await request('POST', 'pages', { form: body });
        files.value = '';
        await reload();
      } catch (err) {
        showError(err, 'Could not add the pages');
      }
    });
  });
  return form;
}

/** The pipeline form; `steps` is filled with one checkbox per engine once the engines are known. */
export function pipelineForm(): { el: HTMLFormElement; steps: HTMLFieldSetElement } {
  const steps = h('fieldset', { id: 'pipeline-steps' });
  const language = h('input', {
    id: 'pipeline-language',
    type: 'text',
    value: 'English',
    autocomplete: 'off',
  });
  const run = h('button', { type: 'submit', class: 'primary' }, 'Start pipeline');
  const form = h(
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
  form.addEventListener('submit', (e) => {
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
  return { el: form, steps };
}

const EXPORT_FORMATS = [
  ['khr', 'Project archive (.khr)'],
  ['rendered', 'Rendered pages (PNG)'],
  ['inpainted', 'Inpainted pages (PNG)'],
  ['pdf', 'PDF of rendered pages'],
] as const;

/** Exports the open project and saves the download under the server's file name. */
export function exportForm(): HTMLFormElement {
  const format = h(
    'select',
    { id: 'export-format' },
    ...EXPORT_FORMATS.map(([v, l]) => h('option', { value: v }, l)),
  );
  const exportButton = h('button', { type: 'submit' }, 'Export');
  const form = h(
    'form',
    { class: 'row' },
    h('label', { for: 'export-format' }, 'Format', format),
    exportButton,
  );
  form.addEventListener('submit', (e) => {
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
  return form;
}

export function closeProjectButton(reload: Reload): HTMLButtonElement {
  const button = h('button', { type: 'button' }, 'Close project');
  button.addEventListener(
    'click',
    () =>
      void busy(button, async () => {
        try {
          await del('projects/current');
          await reload();
        } catch (err) {
          showError(err, 'Could not close the project');
        }
      }),
  );
  return button;
}
