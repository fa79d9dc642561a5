/** Builders for scene tests: pages, nodes, generated comic pages, a door on a temp folder. */
import { randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createCanvas } from '@napi-rs/canvas';
import { createSceneDoors } from '../../../src/doors/scene/index.js';
import { fileFolderStorage } from '../../../src/store/folder-file.js';
import type { Node, Page } from '../../../src/doors/scene/model/model.js';
import { silentLogger } from '../../../src/kernel/logger.js';

export const HASH_A = 'a'.repeat(64);
export const HASH_B = 'b'.repeat(64);

export const tempDir = (prefix = 'airlock-scene-') => mkdtempSync(join(tmpdir(), prefix));

export function imageNodeOf(
  role: 'source' | 'inpainted' | 'rendered' | 'custom',
  blob = HASH_A,
  id: string = randomUUID(),
): Node {
  return {
    id,
    transform: { x: 0, y: 0, width: 100, height: 80, rotationDeg: 0 },
    visible: true,
    kind: { image: { role, blob, opacity: 1, naturalWidth: 100, naturalHeight: 80 } },
  };
}

export function textNodeOf(text = 'hello', id: string = randomUUID()): Node {
  return {
    id,
    transform: { x: 10, y: 10, width: 50, height: 20, rotationDeg: 0 },
    visible: true,
    kind: { text: { text } },
  };
}

export function pageOf(nodes: Node[] = [], id: string = randomUUID(), name = 'page'): Page {
  return { id, name, width: 100, height: 80, nodes };
}

export interface DrawnText {
  text: string;
  x: number;
  y: number;
}

/** A white page with black bold words at known places (baseline-left at x, y). */
export async function comicPage(
  texts: DrawnText[],
  width = 480,
  height = 320,
): Promise<Uint8Array> {
  const canvas = createCanvas(width, height);
  const g = canvas.getContext('2d');
  g.fillStyle = '#f4f4f4';
  g.fillRect(0, 0, width, height);
  g.fillStyle = '#000';
  g.font = 'bold 40px "DejaVu Sans"';
  for (const t of texts) g.fillText(t.text, t.x, t.y);
  return new Uint8Array(await canvas.encode('png'));
}

export async function sceneDoor(data: string, scene: Record<string, unknown> = {}, env = {}) {
  const [door] = await createSceneDoors({
    storage: fileFolderStorage,
    data,
    logger: silentLogger,
    env,
    relayPort: 0,
    openapi: [],
    config: { scene },
  });
  return door!;
}
