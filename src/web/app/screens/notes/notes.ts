/**
 * Notes (spec/notes.md "Data"): projects and their documents; creating
 * both. A document opens at `#/notes/doc/<id>`, a PDF page view at
 * `#/notes/pdf/<documentID>/<surfaceID>?page=N`.
 */
import { get, post } from '../../api.js';
import { fill, h } from '../../dom.js';
import { form, messageOf } from '../../form.js';
import { showError } from '../../errors.js';
import { href } from '../../router.js';
import { documentScreen } from './note-document.js';
import { pdfScreen } from './pdf-view.js';
import type { Screen } from '../screen.js';

export interface NotesProject {
  projectID: string;
  name: string;
  createdAt: number;
}
export interface NotesDocumentSummary {
  documentID: string;
  projectID: string;
  title: string;
  revision: number;
}

function createForm(
  id: string,
  label: string,
  button: string,
  submit: (value: string) => Promise<void>,
): HTMLFormElement {
  const input = h('input', {
    id,
    name: id,
    type: 'text',
    required: true,
    maxlength: 200,
    autocomplete: 'off',
  });
  const problem = h('p', { class: 'result-err', role: 'alert' });
  const go = h('button', { type: 'submit' }, button);
  return form(h('form', { class: 'row' }, h('label', { for: id }, label, input), go, problem), {
    button: go,
    clear: [problem],
    send: async () => {
      await submit(input.value.trim());
      input.value = '';
    },
    failed: (err) => {
      problem.textContent = messageOf(err);
      input.focus();
    },
  });
}

const projectsScreen: Screen = (root) => {
  const list = h('ul', { class: 'cards', id: 'notes-projects' });
  const empty = h(
    'p',
    { class: 'empty' },
    'No projects yet. Create one, then add documents to it.',
  );
  const load = async () => {
    try {
      const [{ projects }, { documents }] = await Promise.all([
        get<{ projects: NotesProject[] }>('notes/projects'),
        get<{ documents: NotesDocumentSummary[] }>('notes/documents'),
      ]);
      empty.hidden = projects.length > 0;
      fill(
        list,
        ...projects.map((p) => {
          const docs = documents.filter((d) => d.projectID === p.projectID);
          const titleId = `project-${p.projectID}`;
          return h(
            'li',
            { class: 'card', 'aria-labelledby': titleId, 'data-project-id': p.projectID },
            h('h3', { id: titleId }, p.name),
            docs.length
              ? h(
                  'ul',
                  { 'aria-label': `Documents in ${p.name}` },
                  ...docs.map((d) =>
                    h(
                      'li',
                      {},
                      h('a', { href: href('notes', 'doc', d.documentID) }, d.title),
                      h('span', { class: 'meta' }, ` · revision ${d.revision}`),
                    ),
                  ),
                )
              : h('p', { class: 'empty' }, 'No documents yet.'),
            createForm(
              `new-doc-${p.projectID}`,
              `New document in ${p.name}`,
              'Create document',
              async (title) => {
                const created = await post<{ documentID: string }>('notes/documents', {
                  projectID: p.projectID,
                  title,
                });
                location.hash = href('notes', 'doc', created.documentID);
              },
            ),
          );
        }),
      );
    } catch (e) {
      showError(e, 'Could not load notes');
    }
  };
  fill(
    root,
    h('h1', { tabindex: '-1' }, 'Notes'),
    h(
      'section',
      { 'aria-labelledby': 'new-project-title' },
      h('h2', { id: 'new-project-title' }, 'New project'),
      createForm('new-project', 'Project name', 'Create project', async (name) => {
        await post('notes/projects', { name });
        await load();
      }),
    ),
    h(
      'section',
      { 'aria-labelledby': 'projects-title' },
      h('h2', { id: 'projects-title' }, 'Projects'),
      empty,
      list,
    ),
  );
  void load();
};

export const notesScreen: Screen = (root, route) => {
  if (route.params[0] === 'doc' && route.params[1]) return documentScreen(root, route);
  if (route.params[0] === 'pdf' && route.params[2]) return pdfScreen(root, route);
  return projectsScreen(root, route);
};
