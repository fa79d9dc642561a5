/**
 * Baseline (issue 18): the engine as it was before the scene engines were
 * rebuilt, kept unregistered so bench/engines.mjs can measure today's
 * engines beside the new ones in the same run. It lives out of src/ (issue 26),
 * its types stripped, and imports what it shares from dist/ (`npm run bench`
 * builds first).
 *
 * `renderer`: draws each translation into its text region over the
 * inpainted image (or the source when there is none) and writes the page's
 * rendered image. Text is word-wrapped (long words break by character), the
 * font size is the largest that fits unless the style fixes one, and the
 * style's colour, stroke, bold/italic and alignment apply; the font is the
 * node's first installed family, else `defaultFont`, else the project's, else
 * the bundled DejaVu Sans. Drawing is clipped to the region.
 */
import { createCanvas } from '@napi-rs/canvas';
import {
  blobBytes,
  canvasOf,
  defaultFont,
  fontFamilies,
  imageNode,
  png,
} from '../../dist/doors/scene/files/images.js';
import { pixelRect, putImageOps, textNodes } from '../../dist/doors/scene/engines/raster.js';

const LINE_HEIGHT = 1.2;
const PADDING_PX = 2;
const MIN_SIZE = 6;

/** Greedy word wrap to `maxWidth`; words wider than a line are split by character. */
export function wrap(ctx, text, maxWidth) {
  const lines = [];
  for (const paragraph of text.split(/\r?\n/)) {
    let line = '';
    for (const word of paragraph.split(/\s+/).filter(Boolean)) {
      const candidate = line ? `${line} ${word}` : word;
      if (ctx.measureText(candidate).width <= maxWidth) {
        line = candidate;
        continue;
      }
      if (line) lines.push(line);
      let rest = word;
      while (ctx.measureText(rest).width > maxWidth && rest.length > 1) {
        let cut = rest.length - 1;
        while (cut > 1 && ctx.measureText(rest.slice(0, cut)).width > maxWidth) cut--;
        lines.push(rest.slice(0, cut));
        rest = rest.slice(cut);
      }
      line = rest;
    }
    lines.push(line);
  }
  return lines;
}

export function fontFor(text, options) {
  const installed = fontFamilies();
  const named = text.style?.fontFamilies.find((f) => installed.includes(f));
  return (
    named ??
    [options.defaultFont, options.projectFont].find((f) => f && installed.includes(f)) ??
    defaultFont()
  );
}

const cssFont = (size, family, text) =>
  `${text.style?.italic ? 'italic ' : ''}${text.style?.bold ? 'bold ' : ''}${size}px "${family}"`;

/** The largest size (px) whose wrapped lines fit the box. */
export function fitSize(ctx, content, family, text, w, h) {
  let lo = MIN_SIZE;
  let hi = Math.max(MIN_SIZE, Math.floor(h));
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    ctx.font = cssFont(mid, family, text);
    const lines = wrap(ctx, content, w);
    const fits =
      lines.length * mid * LINE_HEIGHT <= h && lines.every((l) => ctx.measureText(l).width <= w);
    if (fits) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

const rgba = (c) => `rgba(${c[0]}, ${c[1]}, ${c[2]}, ${(c[3] ?? 255) / 255})`;

export function createRendererEngine() {
  return {
    id: 'renderer',
    name: 'Renderer (draw translations into their regions)',
    needs: ['SourceImage', 'Translations'],
    uses: ['Inpainted'],
    produces: ['FinalRender'],
    async start(options) {
      return {
        async page({ page, blobs }) {
          const base = imageNode(page, 'inpainted') ?? imageNode(page, 'source');
          if (!base) throw new Error(`page '${page.name}' has no source image`);
          const image = await canvasOf(await blobBytes(blobs, base.image.blob));
          const { width, height } = image;
          const canvas = createCanvas(width, height);
          const ctx = canvas.getContext('2d');
          ctx.drawImage(image, 0, 0);
          const sx = width / page.width;
          const sy = height / page.height;
          const ops = [];
          for (const { node, text } of textNodes(page, options.textNodeIds)) {
            const content = text.translation?.trim();
            if (!content || !node.visible) continue;
            const t = node.transform;
            const r = pixelRect(
              { ...t, x: t.x * sx, y: t.y * sy, width: t.width * sx, height: t.height * sy },
              width,
              height,
            );
            const w = r.w - 2 * PADDING_PX;
            const h = r.h - 2 * PADDING_PX;
            if (w <= 0 || h <= 0) continue;
            const family = fontFor(text, options);
            const size = text.style?.fontSize ?? fitSize(ctx, content, family, text, w, h);
            ctx.save();
            ctx.beginPath();
            ctx.rect(r.x0, r.y0, r.w, r.h);
            ctx.clip();
            if (t.rotationDeg) {
              ctx.translate(r.x0 + r.w / 2, r.y0 + r.h / 2);
              ctx.rotate((t.rotationDeg * Math.PI) / 180);
              ctx.translate(-(r.x0 + r.w / 2), -(r.y0 + r.h / 2));
            }
            ctx.font = cssFont(size, family, text);
            const lines = wrap(ctx, content, w);
            const align = text.style?.textAlign ?? 'center';
            ctx.textAlign = align;
            ctx.textBaseline = 'middle';
            const x =
              align === 'left'
                ? r.x0 + PADDING_PX
                : align === 'right'
                  ? r.x1 - PADDING_PX
                  : r.x0 + r.w / 2;
            const lineHeight = size * LINE_HEIGHT;
            const top = r.y0 + r.h / 2 - (lines.length * lineHeight) / 2 + lineHeight / 2;
            const stroke = text.style?.stroke;
            lines.forEach((line, i) => {
              const y = top + i * lineHeight;
              if (stroke && stroke.widthPx > 0) {
                ctx.strokeStyle = rgba(stroke.color);
                ctx.lineWidth = stroke.widthPx * 2; // half of a centred stroke lies under the fill
                ctx.lineJoin = 'round';
                ctx.strokeText(line, x, y);
              }
              ctx.fillStyle = rgba(text.style?.color ?? [0, 0, 0, 255]);
              ctx.fillText(line, x, y);
            });
            ctx.restore();
            if (text.fontSizePx !== size)
              ops.push({
                updateNode: {
                  page: page.id,
                  id: node.id,
                  patch: { data: { text: { fontSizePx: size } } },
                },
              });
          }
          const hash = await blobs.put(await png(canvas));
          return [...putImageOps(page, 'rendered', hash, width, height), ...ops];
        },
      };
    },
  };
}
