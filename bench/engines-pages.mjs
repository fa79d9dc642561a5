/**
 * Manga-like benchmark pages with known ground truth (issue 18): panels with
 * flat, gradient or screentone backgrounds; speech bubbles of several shapes
 * (ellipse, rounded rectangle, rectangle, jagged "shout") holding horizontal
 * English or vertical Japanese text in real fonts; one caption per page
 * outside the bubbles (in a narration box or straight on the artwork).
 * Deterministic (seeded). Each page comes with its clean artwork (no text),
 * the text mask, and per text block its ink box, text, direction and bubble
 * polygon. Used by bench/engines.mjs and, small, by the scene tests.
 */
import { createCanvas, GlobalFonts } from '@napi-rs/canvas';

export const PAGE_W = 640;
export const PAGE_H = 900;
export const BACKGROUNDS = ['flat', 'gradient', 'screentone'];
export const LATIN_FONT = 'DejaVu Sans';
export const CJK_FONT = 'Noto Sans CJK JP';

const EN = [
  'WHERE ARE YOU GOING',
  'I TOLD YOU SO',
  'WAIT FOR ME',
  'THIS IS NOT OVER',
  'WE HAVE TO RUN',
  'DID YOU SEE THAT',
  'LEAVE IT TO ME',
  'THE DOOR IS OPEN',
  'NOBODY KNOWS',
  'COME BACK HERE',
  'IT WAS A TRAP',
  'HOLD ON TIGHT',
  'ONE MORE TIME',
  'LOOK OUT BELOW',
  'THAT IS MY LINE',
  'KEEP MOVING',
];
const JA = [
  'どこへ行くの',
  'ありがとう',
  'まだ終わってない',
  '大丈夫だよ',
  '本当にそう思う',
  '行くぞ',
  '何をしている',
  '待ってくれ',
  'もう一度だ',
  '信じられない',
  '早く逃げて',
  '気をつけて',
  '約束したよね',
  '誰も知らない',
  'ここにいる',
];

/** Deterministic PRNG (mulberry32). */
export function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function fontsPresent() {
  const families = GlobalFonts.families.map((f) => f.family);
  return { latin: families.includes(LATIN_FONT), cjk: families.includes(CJK_FONT) };
}

function fillBackground(g, kind, x, y, w, h, rand) {
  g.save();
  g.beginPath();
  g.rect(x, y, w, h);
  g.clip();
  if (kind === 'flat') {
    const v = 200 + Math.floor(rand() * 40);
    g.fillStyle = `rgb(${v},${v},${v})`;
    g.fillRect(x, y, w, h);
  } else if (kind === 'gradient') {
    const grad = g.createLinearGradient(x, y, x + w * rand(), y + h);
    grad.addColorStop(0, 'rgb(120,120,130)');
    grad.addColorStop(1, 'rgb(235,235,240)');
    g.fillStyle = grad;
    g.fillRect(x, y, w, h);
  } else {
    g.fillStyle = '#fff';
    g.fillRect(x, y, w, h);
    g.fillStyle = '#000';
    const step = 6;
    for (let yy = y; yy < y + h + step; yy += step)
      for (let xx = x + ((yy / step) % 2 ? step / 2 : 0); xx < x + w + step; xx += step) {
        g.beginPath();
        g.arc(xx, yy, 1.4, 0, Math.PI * 2);
        g.fill();
      }
  }
  // A few strokes of "artwork".
  g.strokeStyle = 'rgba(40,40,40,0.9)';
  g.lineWidth = 2;
  for (let i = 0; i < 3; i++) {
    g.beginPath();
    g.moveTo(x + rand() * w, y + rand() * h);
    g.quadraticCurveTo(x + rand() * w, y + rand() * h, x + rand() * w, y + rand() * h);
    g.stroke();
  }
  g.restore();
}

/** Polygon (closed, [[x,y]...]) of a bubble shape around a centre. */
function bubblePolygon(shape, cx, cy, rx, ry) {
  const pts = [];
  if (shape === 'ellipse' || shape === 'jagged') {
    const n = shape === 'jagged' ? 28 : 72;
    for (let i = 0; i < n; i++) {
      const a = (i / n) * Math.PI * 2;
      const k = shape === 'jagged' ? (i % 2 ? 1 : 1.18) : 1;
      pts.push([cx + Math.cos(a) * rx * k, cy + Math.sin(a) * ry * k]);
    }
  } else {
    const r = shape === 'roundrect' ? Math.min(rx, ry) * 0.45 : 0;
    const x0 = cx - rx;
    const y0 = cy - ry;
    const x1 = cx + rx;
    const y1 = cy + ry;
    if (!r)
      return [
        [x0, y0],
        [x1, y0],
        [x1, y1],
        [x0, y1],
      ];
    const corner = (ox, oy, a0) => {
      for (let i = 0; i <= 6; i++) {
        const a = a0 + (i / 6) * (Math.PI / 2);
        pts.push([ox + Math.cos(a) * r, oy + Math.sin(a) * r]);
      }
    };
    corner(x1 - r, y0 + r, -Math.PI / 2);
    corner(x1 - r, y1 - r, 0);
    corner(x0 + r, y1 - r, Math.PI / 2);
    corner(x0 + r, y0 + r, Math.PI);
  }
  return pts;
}

function tracePolygon(g, pts) {
  g.beginPath();
  pts.forEach(([x, y], i) => (i ? g.lineTo(x, y) : g.moveTo(x, y)));
  g.closePath();
}

/** Lines (en: words wrapped to ≤ 2 per line) or columns (ja: ≤ 5 characters). */
function layoutText(lang, text) {
  if (lang === 'en') {
    const words = text.split(' ');
    const lines = [];
    for (let i = 0; i < words.length; i += 2) lines.push(words.slice(i, i + 2).join(' '));
    return lines;
  }
  const chars = [...text];
  const cols = [];
  for (let i = 0; i < chars.length; i += 5) cols.push(chars.slice(i, i + 5).join(''));
  return cols;
}

/** Size (w, h) of a text block and a function drawing it centred at (cx, cy). */
function textBlock(g, lang, lines) {
  if (lang === 'en') {
    const size = 18;
    const font = `bold ${size}px "${LATIN_FONT}"`;
    g.font = font;
    const w = Math.max(...lines.map((l) => g.measureText(l).width));
    const lh = size * 1.3;
    const h = lines.length * lh;
    return {
      w,
      h,
      draw(ctx, cx, cy) {
        ctx.font = font;
        ctx.textAlign = 'center';
        ctx.textBaseline = 'middle';
        lines.forEach((l, i) => ctx.fillText(l, cx, cy - h / 2 + lh * (i + 0.5)));
      },
    };
  }
  const size = 24;
  const font = `${size}px "${CJK_FONT}"`;
  const cw = size * 1.35;
  const w = lines.length * cw;
  const h = Math.max(...lines.map((l) => [...l].length)) * size * 1.08;
  return {
    w,
    h,
    draw(ctx, cx, cy) {
      ctx.font = font;
      ctx.textAlign = 'center';
      ctx.textBaseline = 'middle';
      // Columns right to left, characters top to bottom.
      lines.forEach((col, c) => {
        const x = cx + w / 2 - cw * (c + 0.5);
        [...col].forEach((ch, k) => ctx.fillText(ch, x, cy - h / 2 + size * 1.08 * (k + 0.5)));
      });
    },
  };
}

const overlaps = (a, b, pad) =>
  a.x0 - pad < b.x1 && b.x0 - pad < a.x1 && a.y0 - pad < b.y1 && b.y0 - pad < a.y1;

/** Ink box of a canvas's non-transparent pixels inside a window. */
function inkBox(alpha, w, h, win) {
  let x0 = Infinity;
  let y0 = Infinity;
  let x1 = -1;
  let y1 = -1;
  for (let y = Math.max(0, win.y0); y < Math.min(h, win.y1); y++)
    for (let x = Math.max(0, win.x0); x < Math.min(w, win.x1); x++)
      if (alpha[(y * w + x) * 4 + 3] > 40) {
        if (x < x0) x0 = x;
        if (y < y0) y0 = y;
        if (x > x1) x1 = x;
        if (y > y1) y1 = y;
      }
  return { x0, y0, x1: x1 + 1, y1: y1 + 1 };
}

/**
 * Page `index`: `lang` alternates en/ja, the background cycles through
 * BACKGROUNDS. Returns {png, cleanPng, textMask (Uint8Array w*h, 1 = text),
 * blocks: [{box, text, lang, direction, kind: bubble|caption, polygon}], ...}.
 */
export async function generatePage(index, seed = 18) {
  const rand = rng(seed * 1000 + index);
  const lang = index % 2 ? 'ja' : 'en';
  const background = BACKGROUNDS[Math.floor(index / 2) % 3];
  const art = createCanvas(PAGE_W, PAGE_H);
  const g = art.getContext('2d');
  g.fillStyle = '#fff';
  g.fillRect(0, 0, PAGE_W, PAGE_H);
  // Panels: two rows, the top one split in two.
  const m = 16;
  const gap = 12;
  const rowH = (PAGE_H - 2 * m - gap) / 2;
  const colW = (PAGE_W - 2 * m - gap) / 2;
  const panels = [
    { x: m, y: m, w: colW, h: rowH },
    { x: m + colW + gap, y: m, w: colW, h: rowH },
    { x: m, y: m + rowH + gap, w: PAGE_W - 2 * m, h: rowH },
  ];
  for (const p of panels) {
    fillBackground(g, background, p.x, p.y, p.w, p.h, rand);
    g.strokeStyle = '#000';
    g.lineWidth = 4;
    g.strokeRect(p.x, p.y, p.w, p.h);
  }
  const ink = createCanvas(PAGE_W, PAGE_H);
  const ig = ink.getContext('2d');
  ig.fillStyle = '#000';
  const shapes = ['ellipse', 'roundrect', 'rect', 'jagged'];
  const placed = [];
  const blocks = [];
  const wanted = 3;
  let phrase = Math.floor(rand() * 100);
  const pick = () => {
    const list = lang === 'en' ? EN : JA;
    return list[phrase++ % list.length];
  };
  for (let b = 0; b < wanted + 1; b++) {
    const caption = b === wanted;
    const text = pick();
    const lines = layoutText(lang, text);
    const block = textBlock(g, lang, lines);
    const shape = caption ? (rand() < 0.5 ? 'box' : 'bare') : shapes[(index + b) % shapes.length];
    const fx = shape === 'ellipse' || shape === 'jagged' ? 0.78 : 0.62;
    const rx = caption ? block.w / 2 + 8 : block.w / 2 / fx + 10;
    const ry = caption ? block.h / 2 + 8 : block.h / 2 / fx + 10;
    const reach = shape === 'jagged' ? 1.18 : 1;
    for (let attempt = 0; attempt < 200; attempt++) {
      const panel = panels[Math.floor(rand() * panels.length)];
      const cx = panel.x + rx * reach + 10 + rand() * (panel.w - 2 * rx * reach - 20);
      const cy = panel.y + ry * reach + 10 + rand() * (panel.h - 2 * ry * reach - 20);
      if (!Number.isFinite(cx) || !Number.isFinite(cy)) continue;
      const area = {
        x0: cx - rx * reach,
        y0: cy - ry * reach,
        x1: cx + rx * reach,
        y1: cy + ry * reach,
      };
      if (area.x0 < panel.x + 6 || area.x1 > panel.x + panel.w - 6) continue;
      if (area.y0 < panel.y + 6 || area.y1 > panel.y + panel.h - 6) continue;
      if (placed.some((p) => overlaps(p, area, 14))) continue;
      placed.push(area);
      let polygon = null;
      if (shape !== 'bare') {
        polygon = bubblePolygon(shape === 'box' ? 'rect' : shape, cx, cy, rx, ry);
        tracePolygon(g, polygon);
        g.fillStyle = '#fff';
        g.fill();
        g.strokeStyle = '#000';
        g.lineWidth = 3;
        g.stroke();
      }
      block.draw(ig, cx, cy);
      const pad = 4;
      const box = inkBox(ig.getImageData(0, 0, PAGE_W, PAGE_H).data, PAGE_W, PAGE_H, {
        x0: Math.floor(cx - block.w / 2 - pad * 3),
        y0: Math.floor(cy - block.h / 2 - pad * 3),
        x1: Math.ceil(cx + block.w / 2 + pad * 3),
        y1: Math.ceil(cy + block.h / 2 + pad * 3),
      });
      blocks.push({
        box,
        text: lang === 'en' ? lines.join(' ') : lines.join(''),
        lang,
        direction: lang === 'en' ? 'horizontal' : 'vertical',
        kind: caption ? 'caption' : 'bubble',
        shape,
        polygon,
        centre: [cx, cy],
      });
      break;
    }
  }
  const cleanPng = new Uint8Array(await art.encode('png'));
  const alpha = ig.getImageData(0, 0, PAGE_W, PAGE_H).data;
  const textMask = new Uint8Array(PAGE_W * PAGE_H);
  for (let i = 0; i < textMask.length; i++) textMask[i] = alpha[i * 4 + 3] > 0 ? 1 : 0;
  g.drawImage(ink, 0, 0);
  const png = new Uint8Array(await art.encode('png'));
  // Manga reading order: right to left, top to bottom (by rows of panels).
  if (lang === 'ja') blocks.sort(readingOrder(true));
  else blocks.sort(readingOrder(false));
  return {
    index,
    lang,
    background,
    width: PAGE_W,
    height: PAGE_H,
    png,
    cleanPng,
    textMask,
    blocks,
  };
}

function readingOrder(rtl) {
  return (a, b) => {
    const rowA = a.centre[1] < PAGE_H / 2 ? 0 : 1;
    const rowB = b.centre[1] < PAGE_H / 2 ? 0 : 1;
    if (rowA !== rowB) return rowA - rowB;
    return rtl ? b.centre[0] - a.centre[0] : a.centre[0] - b.centre[0];
  };
}
