/** Types of bench/engines-pages.mjs (the generator is plain JS so the bench runs it with node). */
export const PAGE_W: number;
export const PAGE_H: number;
export const BACKGROUNDS: readonly ['flat', 'gradient', 'screentone'];
export const LATIN_FONT: string;
export const CJK_FONT: string;

export interface Block {
  box: { x0: number; y0: number; x1: number; y1: number };
  text: string;
  lang: 'en' | 'ja';
  direction: 'horizontal' | 'vertical';
  kind: 'bubble' | 'caption';
  shape: string;
  polygon: [number, number][] | null;
  centre: [number, number];
}

export interface GeneratedPage {
  index: number;
  lang: 'en' | 'ja';
  background: 'flat' | 'gradient' | 'screentone';
  width: number;
  height: number;
  png: Uint8Array;
  cleanPng: Uint8Array;
  /** 1 where text was drawn. */
  textMask: Uint8Array;
  blocks: Block[];
}

export function rng(seed: number): () => number;
export function fontsPresent(): { latin: boolean; cjk: boolean };
export function generatePage(index: number, seed?: number): Promise<GeneratedPage>;
