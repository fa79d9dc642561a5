/** Undo and redo for the open scene, saying the epoch (spec/kernel.md §7); used by the project and page views. */
import { post } from '../../api.js';
import { busy, h, onOwner } from '../../dom.js';
import { showError } from '../../errors.js';

export interface HistoryMeta {
  epoch: number | null;
  canUndo: boolean;
  canRedo: boolean;
}

/** Undo and redo buttons that say the epoch; shared by the project and page views. */
export function historyControls(onChange: () => void): {
  el: HTMLElement;
  update: (m: HistoryMeta) => void;
} {
  const epoch = h('span', { class: 'meta', role: 'status', id: 'scene-epoch' });
  const undo = h('button', { type: 'button' }, 'Undo');
  const redo = h('button', { type: 'button' }, 'Redo');
  const act = (button: HTMLButtonElement, what: 'undo' | 'redo') =>
    void busy(button, async () => {
      try {
        const { epoch: e } = await post<{ epoch: number | null }>(`history/${what}`);
        if (e === null) epoch.textContent = `Nothing to ${what}.`;
        onChange();
      } catch (err) {
        showError(err, `Could not ${what}`);
      }
    });
  onOwner(undo, 'click', () => act(undo, 'undo'));
  onOwner(redo, 'click', () => act(redo, 'redo'));
  return {
    el: h('div', { class: 'row', role: 'group', 'aria-label': 'History' }, undo, redo, epoch),
    update(m) {
      // Disabled buttons lose focus; keep them focusable and say why instead.
      undo.setAttribute('aria-disabled', String(!m.canUndo));
      redo.setAttribute('aria-disabled', String(!m.canRedo));
      undo.dataset.epoch = redo.dataset.epoch = String(m.epoch ?? '');
      epoch.textContent = m.epoch === null ? '' : `Epoch ${m.epoch}`;
    },
  };
}
