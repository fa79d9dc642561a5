/**
 * Baseline (issue 18): the engine as it was before the scene engines were
 * rebuilt, kept unregistered so bench/engines.mjs can measure today's
 * engines beside the new ones in the same run. It lives out of src/ (issue 26),
 * its types stripped, and imports what it shares from dist/ (`npm run bench`
 * builds first).
 *
 * `fill`: erases each text region with the colour around it (the per-channel
 * median of a thin ring just outside the region), writing the page's
 * inpainted image. Pixels outside the regions are left untouched.
 */
import { createCanvas } from '@napi-rs/canvas';
import { blobBytes, canvasOf, imageNode, png } from '../../dist/doors/scene/files/images.js';
import { pixelRect, putImageOps, textNodes } from '../../dist/doors/scene/engines/raster.js';

const RING_PX = 3;

export function ringColour(data, width, height, r) {
  const channels = [[], [], [], []];
  const take = (x, y) => {
    if (x < 0 || y < 0 || x >= width || y >= height) return;
    if (x >= r.x0 && x < r.x1 && y >= r.y0 && y < r.y1) return;
    const i = (y * width + x) * 4;
    for (let c = 0; c < 4; c++) channels[c].push(data[i + c]);
  };
  for (let d = 1; d <= RING_PX; d++) {
    for (let x = r.x0 - d; x < r.x1 + d; x++) {
      take(x, r.y0 - d);
      take(x, r.y1 - 1 + d);
    }
    for (let y = r.y0 - d; y < r.y1 + d; y++) {
      take(r.x0 - d, y);
      take(r.x1 - 1 + d, y);
    }
  }
  const median = (v) => (v.length ? v.sort((a, b) => a - b)[v.length >> 1] : 255);
  return [median(channels[0]), median(channels[1]), median(channels[2]), median(channels[3])];
}

export function createFillEngine() {
  return {
    id: 'fill',
    name: 'Fill (erase text regions with the surrounding background colour)',
    needs: ['SourceImage', 'TextBoxes'],
    produces: ['Inpainted'],
    async start(options) {
      return {
        async page({ page, blobs }) {
          const source = imageNode(page, 'source');
          if (!source) throw new Error(`page '${page.name}' has no source image`);
          const canvas = await canvasOf(await blobBytes(blobs, source.image.blob));
          const { width, height } = canvas;
          const ctx = canvas.getContext('2d');
          const pixels = ctx.getImageData(0, 0, width, height);
          // Scale node coordinates (page space) to the image's pixels.
          const sx = width / page.width;
          const sy = height / page.height;
          const out = createCanvas(width, height);
          const octx = out.getContext('2d');
          octx.drawImage(canvas, 0, 0);
          for (const { node } of textNodes(page, options.textNodeIds)) {
            const t = node.transform;
            const r = pixelRect(
              { ...t, x: t.x * sx, y: t.y * sy, width: t.width * sx, height: t.height * sy },
              width,
              height,
            );
            if (!r.w || !r.h) continue;
            const [cr, cg, cb, ca] = ringColour(pixels.data, width, height, r);
            octx.clearRect(r.x0, r.y0, r.w, r.h);
            octx.fillStyle = `rgba(${cr}, ${cg}, ${cb}, ${ca / 255})`;
            octx.fillRect(r.x0, r.y0, r.w, r.h);
          }
          const hash = await blobs.put(await png(out));
          return putImageOps(page, 'inpainted', hash, width, height);
        },
      };
    },
  };
}
