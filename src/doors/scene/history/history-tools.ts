/**
 * `koharu.undo` and `koharu.redo` (spec/scene.md "MCP tools"; the REST
 * `POST /history/undo|redo` run them): decided by what they change
 * (issue 24). The effect and targets are those of the ops the move would
 * apply — undoing an added page removes it (`destructive`, `remove_page`) —
 * read once per call from the open project's history. The call then runs
 * only on that project at that epoch (`versionConflict` otherwise), and an
 * approval binds to them, so neither a parallel call nor a change the owner
 * makes after approving can turn it into the reversal of another step.
 */
import { opsPreviewDetails } from '../policy/op-thumbnails.js';
import { z } from 'zod';
import { AirlockError, defineTool, type Connection, type Effect } from '../../../kernel/index.js';
import {
  callTag,
  OPERATION_ID_HELP,
  OperationID,
  operationTag,
  sceneJournal,
} from './operations.js';
import { kindCounts, opsEffect, opsTargets, removalsOf } from '../policy/op-policy.js';
import type { Op } from '../model/ops.js';
import type { Scene } from '../model/model.js';
import type { SceneSession, SeenHistory } from '../session.js';

/** undo/redo: Koharu's `{}`, plus the optional operationID (operations.ts). */
const HistoryMove = z.object({ operationID: OperationID }).strict();
type HistoryMove = z.output<typeof HistoryMove>;
const EpochOrNull = z.object({ epoch: z.number().int().nullable() });

/** What the call was judged on: the project, its epoch and the ops the move would apply. */
interface Look {
  seen: SeenHistory | null;
  scene: Scene | null;
  move: { label: string; ops: readonly Op[] } | null;
}

export function historyMoveTool(direction: 'undo' | 'redo', name: string, session: SceneSession) {
  // One look per call: the kernel hands the same validated input to the
  // effect, the policy hooks and the handler (kernel/calls/pipeline.ts), so each
  // reads the state the first one saw.
  const looks = new WeakMap<HistoryMove, Look>();
  const look = async (input: HistoryMove, connection?: Connection): Promise<Look> => {
    const seen = looks.get(input);
    if (seen) return seen;
    // Scale-out: judge what every instance sees.
    await session.sync();
    const project = session.current();
    const history = project?.history;
    // A retry of a move already made applies nothing: the history answers its first epoch.
    const tag = connection ? callTag(name, input, connection) : null;
    const retry = history !== undefined && tag !== null && history.epochOf(tag) !== null;
    const fresh: Look = {
      seen: project ? { project, epoch: project.history.epoch } : null,
      scene: project ? project.scene() : null,
      move: retry
        ? null
        : ((direction === 'undo' ? history?.peekUndo() : history?.peekRedo()) ?? null),
    };
    looks.set(input, fresh);
    return fresh;
  };
  const what = direction === 'undo' ? 'Undo the last op' : 'Redo the last undone op';

  return defineTool({
    name,
    description: `${what}; returns {epoch} (null: nothing to ${direction}). ${OPERATION_ID_HELP}`,
    input: HistoryMove,
    output: EpochOrNull,
    effect: async (input, connection): Promise<Effect> => {
      const { move } = await look(input, connection);
      return move ? opsEffect(move.ops) : 'write';
    },
    publishedEffect: 'destructive',
    // Koharu's reference tools publish no readOnlyHint/destructiveHint.
    statedHints: [],
    policy: {
      targets: async (input, connection) => {
        const { move } = await look(input, connection);
        return move ? opsTargets(move.ops) : [];
      },
      targetsAre: 'parts',
      binds: async (input) => {
        const { seen } = await look(input);
        return seen && { project: seen.project.dir, epoch: seen.epoch };
      },
      preview: async (input) => {
        const { move, scene } = await look(input);
        const project = scene?.project.name ?? 'scene';
        if (!move || !scene) return { summary: `${project}: nothing to ${direction}` };
        const removes = removalsOf(scene, move.ops);
        return {
          summary: `${project}: ${direction} "${move.label}": ${kindCounts(move.ops)}`,
          step: move.label,
          ...(await opsPreviewDetails(scene, move.ops, session.current()?.blobs ?? null)),
          ...(removes.length > 0 ? { removes } : {}),
        };
      },
    },
    journal: sceneJournal(session),
    writes: true,
    handler: async (input, ctx) => {
      const { seen } = await look(input);
      if (!seen) {
        // No project when judged: noProject, or, if one was opened since, a move nobody judged.
        session.require();
        throw new AirlockError(
          'versionConflict',
          `A project was opened since this call was decided; call ${name} again.`,
        );
      }
      const move = (operation?: string) =>
        direction === 'undo' ? session.undo(operation, seen) : session.redo(operation, seen);
      const { operation } = ctx;
      if (!operation) return { epoch: await move() };
      return ctx.write(async () => ({ epoch: await move(operationTag(operation)) }));
    },
  });
}
