/**
 * Page upload (`POST pages`): each image becomes a page with one source image
 * node at its natural size; all pages of one upload are one history step.
 */
import { randomUUID } from 'node:crypto';
import { AirlockError } from '../../../kernel/index.js';
import { decode } from './images.js';
import type { Page } from '../model/model.js';
import type { Op } from '../model/ops.js';
import type { SceneSession } from '../session.js';

export interface UploadedImage {
  filename: string;
  bytes: Uint8Array;
}

export async function addPages(
  session: SceneSession,
  files: UploadedImage[],
): Promise<{
  epoch: number;
  pages: { id: string; name: string; width: number; height: number }[];
}> {
  const project = session.require();
  if (!files.length)
    throw new AirlockError(
      'malformedRequest',
      'No image in the upload; send at least one file part.',
    );
  const ops: Op[] = [];
  const added: { id: string; name: string; width: number; height: number }[] = [];
  for (const file of files) {
    const image = await decode(file.bytes);
    const blob = await project.blobs.put(file.bytes);
    const name = file.filename.replace(/\.[^.]+$/, '') || `page ${added.length + 1}`;
    const page: Page = {
      id: randomUUID(),
      name,
      width: image.width,
      height: image.height,
      nodes: [
        {
          id: randomUUID(),
          transform: { x: 0, y: 0, width: image.width, height: image.height, rotationDeg: 0 },
          visible: true,
          kind: {
            image: {
              role: 'source',
              blob,
              opacity: 1,
              naturalWidth: image.width,
              naturalHeight: image.height,
              name: file.filename,
            },
          },
        },
      ],
    };
    ops.push({ addPage: { page } });
    added.push({ id: page.id, name, width: page.width, height: page.height });
  }
  const label = `add ${files.length} page${files.length > 1 ? 's' : ''}`;
  const epoch = await session.applyOn(project, ops, label);
  return { epoch, pages: added };
}
