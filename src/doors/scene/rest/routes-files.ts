/**
 * Files of the active project over REST: blobs by hash (falling back to a
 * kept export), page thumbnails, and page image uploads. In scale-out the
 * blob store is shared by every project (and door), so a blob is the active
 * project's when its scene names it — as a project folder's `blobs/` would
 * hold it — and a deleted project's exports are no longer served.
 */
import { AirlockError, isBlobHash } from '../../../kernel/index.js';
import type { RestRoute } from '../../../transport/surface.js';
import { bestImage, blobBytes, blobsOf, thumbnail } from '../files/images.js';
import { parseMultipart } from './multipart.js';
import { asTool, bytesAsBuffer, file, header, route, type RouteDeps } from './rest.js';

export function fileRoutes(deps: RouteDeps): RestRoute[] {
  const { session, restNames, staging } = deps;
  return [
    route(
      'GET',
      'blobs/{hash}',
      'A blob of the active project (or an export) by hash',
      async (req) => {
        const p = session.require();
        const hash = req.params.hash ?? '';
        if (!isBlobHash(hash))
          throw new AirlockError(
            'malformedRequest',
            'A blob hash is 64 lowercase hex characters; use a hash from get_scene.',
          );
        const mine = !session.shared || blobsOf(p.history.state).has(hash);
        const bytes = mine ? await p.blobs.get(hash) : null;
        if (bytes) {
          const isPng = bytes[0] === 0x89 && bytes[1] === 0x50;
          const isJpeg = bytes[0] === 0xff && bytes[1] === 0xd8;
          return file({
            bytes,
            contentType: isPng ? 'image/png' : isJpeg ? 'image/jpeg' : 'application/octet-stream',
          });
        }
        const kept = await p.exports.find(hash);
        if (kept) return file(kept);
        throw new AirlockError(
          'notFound',
          `No blob ${hash} in the active project; use a hash from get_scene.`,
        );
      },
    ),
    route(
      'GET',
      'pages/{id}/thumbnail',
      'PNG thumbnail of a page (at most 320 px)',
      async (req) => {
        const p = session.require();
        const page = p.history.state.pages.find((x) => x.id === req.params.id);
        if (!page)
          throw new AirlockError(
            'notFound',
            `No page ${req.params.id}; GET /api/v1/scene.json lists the pages.`,
          );
        const image = bestImage(page);
        if (!image)
          throw new AirlockError(
            'notFound',
            `Page ${page.id} has no image; add one with POST /api/v1/pages.`,
          );
        return file({
          bytes: await thumbnail(await blobBytes(p.blobs, image.image.blob)),
          contentType: 'image/png',
        });
      },
    ),
    route('POST', 'pages', 'Upload page images (multipart/form-data), one batch', async (req) => {
      session.require();
      const parts = parseMultipart(bytesAsBuffer(req.body), header(req, 'content-type'));
      const images = parts.filter(
        (part) => part.filename !== undefined || part.contentType?.startsWith('image/'),
      );
      const bytes = images.map((part) => new Uint8Array(part.data));
      if (!bytes.length)
        throw new AirlockError(
          'malformedRequest',
          'No image in the upload; send at least one file part.',
        );
      return staging.hold(bytes, (refs) =>
        asTool(
          deps,
          req,
          restNames.uploadPages,
          {
            files: refs.map((ref, i) => ({ name: images[i]!.filename ?? images[i]!.name, ...ref })),
          },
          201,
        ),
      );
    }),
  ];
}
