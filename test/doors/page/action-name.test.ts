import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { foldName, mixesScripts } from '../../../src/doors/page/action-name.js';

const source = (path: string) =>
  readFileSync(new URL(`../../../src/${path}`, import.meta.url), 'utf8');

describe('action names compared by meaning', () => {
  it("the page bridge's copy is byte-for-byte the door's", () => {
    expect(source('web/bridge/action-name.ts')).toBe(source('doors/page/action-name.ts'));
  });

  it('folds case, width, compatibility forms, format characters and outer spaces', () => {
    const names = [
      'Submit_Order',
      'submit_order ',
      ' submit_order',
      'submit_order\u200b',
      'sub\u200dmit_order',
      '\u202esubmit_order',
      'ＳＵＢＭＩＴ_ＯＲＤＥＲ',
    ];
    expect(names.map(foldName)).toEqual(names.map(() => 'submit_order'));
    expect(foldName('Straße')).toBe('strasse');
  });

  it('tells a Latin name mixed with Cyrillic or Greek look-alikes, and leaves one-script names alone', () => {
    expect(mixesScripts('\u0455ubmit_order')).toBe(true); // Cyrillic dze
    expect(mixesScripts('submit_\u03bfrder')).toBe(true); // Greek omicron
    expect(['submit_order', 'заказ', 'παραγγελία', '注文', 'add_2'].filter(mixesScripts)).toEqual(
      [],
    );
  });
});
