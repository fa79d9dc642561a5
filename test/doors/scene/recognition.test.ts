/**
 * Recognition (issue 32 item 4): Traditional Chinese read with
 * `chi_tra_vert`, a vertical block's columns ordered by their right edge,
 * and the confidence kept per block on its text node.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { createCanvas } from '@napi-rs/canvas';
import { detectBlocks } from '../../../src/doors/scene/engines/dbnet.js';
import { ocrWorkers } from '../../../src/doors/scene/engines/ocr-models.js';
import { regionNode } from '../../../src/doors/scene/engines/tesseract.js';
import { columnOrder } from '../../../src/doors/scene/engines/text-layout.js';

const workers = ocrWorkers();
afterAll(() => workers.close());

/** A white bubble (a tenth of the page) with a dark outline holding vertical columns, right to left. */
function verticalBubble(columns: string[], font: string) {
  const w = 800;
  const h = 600;
  const c = createCanvas(w, h);
  const g = c.getContext('2d');
  g.fillStyle = '#9ab';
  g.fillRect(0, 0, w, h);
  g.fillStyle = '#fff';
  g.strokeStyle = '#111';
  g.lineWidth = 3;
  g.beginPath();
  g.ellipse(400, 300, 120, 150, 0, 0, Math.PI * 2);
  g.fill();
  g.stroke();
  g.fillStyle = '#000';
  g.font = `28px "${font}"`;
  g.textAlign = 'center';
  g.textBaseline = 'top';
  columns.forEach((col, k) =>
    [...col].forEach((ch, i) => g.fillText(ch, 420 - k * 40, 230 + i * 32)),
  );
  return { rgba: g.getImageData(0, 0, w, h).data, w, h };
}

describe('recognition', () => {
  it('orders a vertical block by its columns right edges, right to left', () => {
    const line = (x0: number, text: string) => ({
      text,
      bbox: { x0, y0: 0, x1: x0 + 20, y1: 100 },
    });
    expect(
      columnOrder([line(10, 'c'), line(70, 'a'), line(40, 'b')], 'vertical').map((l) => l.text),
    ).toEqual(['a', 'b', 'c']);
    expect(columnOrder([line(10, 'x'), line(70, 'y')], 'horizontal').map((l) => l.text)).toEqual([
      'x',
      'y',
    ]);
  });

  it('reads vertical Traditional Chinese in one bubble, columns in order, and keeps its confidence on the node', async () => {
    const { rgba, w, h } = verticalBubble(['我們走吧', '時間到了'], 'Noto Sans CJK TC');
    const { found } = await detectBlocks(rgba, w, h, 'zh-Hant', workers);
    expect(found).toHaveLength(1);
    const block = found[0]!;
    expect(block.direction).toBe('vertical');
    expect(block.bubble).not.toBeNull();
    const truth = '我們走吧時間到了';
    let same = 0;
    for (const [i, ch] of [...truth].entries()) if ([...block.text][i] === ch) same++;
    expect(same / truth.length, block.text).toBeGreaterThanOrEqual(0.75);
    const node = regionNode(block, { width: w, height: h }, w, h, 'zh-Hant');
    const text = 'text' in node.kind ? node.kind.text : null;
    expect(text?.confidence).toBeCloseTo(Math.round(block.confidence) / 100, 5);
    expect(text?.sourceLang).toBe('zh-Hant');
  });
});
