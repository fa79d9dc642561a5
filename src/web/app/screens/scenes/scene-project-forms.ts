/**
 * The scenes overview's forms and their actions: create a project, add
 * pages, start a pipeline, export, close. Each action that changes what the
 * overview shows calls `reload` when it succeeds.
 */
import { del, get, post, request, saveUrl } from '../../api.js';
import { busy, fill, h, onOwner } from '../../dom.js';
import { showError } from '../../errors.js';
import { form as withSubmit, refuse } from '../../form.js';

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
  return withSubmit(form, {
    button: create,
    send: async () => {
      await post('projects', { name: name.value.trim() });
      name.value = '';
      await reload();
    },
    failed: 'Could not create the project',
  });
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
  return withSubmit(form, {
    button: upload,
    read: () => {
      const chosen = Array.from(files.files ?? []);
      return chosen.length ? chosen : refuse('Choose one or more images first.', 'Add pages');
    },
    send: async (chosen) => {
      const body = new FormData();
      for (const f of chosen) body.append('file', f, f.name);
      await request('POST', 'pages', { form: body });
      files.value = '';
      await reload();
    },
    failed: 'Could not add the pages',
  });
}

/**
 * "1-3, 5" → the 0-based page indexes it names (in order, once each), or
 * an error sentence; empty → null (every page).
 */
export function parsePageNumbers(text: string, count: number): number[] | null | string {
  const trimmed = text.trim();
  if (!trimmed) return null;
  const chosen: number[] = [];
  for (const part of trimmed.split(',')) {
    const m = /^\s*(\d+)\s*(?:-\s*(\d+)\s*)?$/.exec(part);
    if (!m) return `'${part.trim()}' is not a page number or range; write e.g. 1-3, 5.`;
    const from = Number(m[1]);
    const to = m[2] === undefined ? from : Number(m[2]);
    if (from < 1 || to < from || to > count)
      return `Pages ${part.trim()} are not within 1–${count}; the project has ${count} page(s).`;
    for (let n = from; n <= to; n++) if (!chosen.includes(n - 1)) chosen.push(n - 1);
  }
  return chosen;
}

/**
 * The pipeline form; `steps` is filled with one checkbox per engine once
 * the engines are known. `pageIds` gives the open project's pages in order,
 * for the page choice.
 */
export function pipelineForm(pageIds: () => string[] = () => []): {
  el: HTMLFormElement;
  steps: HTMLFieldSetElement;
} {
  const steps = h('fieldset', { id: 'pipeline-steps' });
  const language = h('input', {
    id: 'pipeline-language',
    type: 'text',
    value: 'English',
    autocomplete: 'off',
  });
  const pages = h('input', {
    id: 'pipeline-pages',
    type: 'text',
    placeholder: 'all',
    autocomplete: 'off',
  });
  const fonts = h('datalist', { id: 'pipeline-fonts' });
  const font = h('input', {
    id: 'pipeline-font',
    type: 'text',
    list: 'pipeline-fonts',
    autocomplete: 'off',
  });
  const system = h('textarea', { id: 'pipeline-system', rows: 3 });
  void get<{ fonts: string[]; defaultFont?: string }>('fonts').then(
    ({ fonts: names, defaultFont }) => {
      fill(fonts, ...names.map((n) => h('option', { value: n })));
      if (defaultFont) font.placeholder = defaultFont;
    },
    () => undefined,
  );
  const run = h('button', { type: 'submit', class: 'primary' }, 'Start pipeline');
  const form = h(
    'form',
    { class: 'stack-form' },
    steps,
    h(
      'div',
      { class: 'row' },
      h('label', { for: 'pipeline-language' }, 'Target language', language),
      h('label', { for: 'pipeline-pages' }, 'Pages (e.g. 1-3, 5)', pages),
      h('label', { for: 'pipeline-font' }, 'Default font', font, fonts),
    ),
    h('label', { for: 'pipeline-system' }, 'System prompt (optional)', system),
    h('div', { class: 'row' }, run),
  );
  withSubmit(form, {
    button: run,
    read: () => {
      const chosen = Array.from(steps.querySelectorAll<HTMLInputElement>('input:checked')).map(
        (c) => c.value,
      );
      if (!chosen.length) return refuse('Choose at least one step.', 'Pipeline');
      const ids = pageIds();
      const picked = parsePageNumbers(pages.value, ids.length);
      if (typeof picked === 'string') return refuse(picked, 'Pipeline');
      return { chosen, ids, picked };
    },
    send: ({ chosen, ids, picked }) =>
      post('pipelines', {
        steps: chosen,
        ...(language.value.trim() ? { targetLanguage: language.value.trim() } : {}),
        ...(picked ? { pages: picked.map((i) => ids[i]!) } : {}),
        ...(font.value.trim() ? { defaultFont: font.value.trim() } : {}),
        ...(system.value.trim() ? { systemPrompt: system.value.trim() } : {}),
      }),
    failed: 'Could not start the pipeline',
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
  return withSubmit(form, {
    button: exportButton,
    send: async () => {
      const res = await request('POST', 'projects/current/export', {
        body: { format: format.value },
      });
      const named = /filename="([^"]+)"/.exec(res.headers.get('content-disposition') ?? '')?.[1];
      saveUrl(
        URL.createObjectURL(await res.blob()),
        named ??
          `export.${format.value === 'khr' ? 'khr' : format.value === 'pdf' ? 'pdf' : 'zip'}`,
      );
    },
    failed: 'Export failed',
  });
}

export function closeProjectButton(reload: Reload): HTMLButtonElement {
  const button = h('button', { type: 'button' }, 'Close project');
  onOwner(
    button,
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
