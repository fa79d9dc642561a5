/**
 * Post-correction of the punctuation tesseract misreads in manga lettering
 * (issue 32 item 4), applied where the misreading is unambiguous: at the
 * end of a block or of a phrase, where the glyphs it is read as cannot
 * stand. Japanese and Chinese: a vertical "!!" read as "リリ" (or "!!" as
 * "!!" full width), "!?" read as "居", "…" gaining colons, "♡" read as "$";
 * runs of ASCII dots become "…".
 */
import type { SourceLanguage } from './ocr-models.js';

/** Where a phrase ends: the end of the text, a line break, or a closing mark. */
const END = String.raw`(?=$|[\s」』）)】。、…‥!?！？])`;

export function fixPunctuation(text: string, lang: SourceLanguage): string {
  if (lang !== 'ja' && lang !== 'zh' && lang !== 'zh-Hant') return text;
  return (
    text
      // "…" read with a colon (or a middle dot pair) beside it.
      .replace(/[:：]*(…+)[:：]*/g, '$1')
      .replace(/[.・･。]{3,}|\.{2,}|・{2,}/g, '…')
      // A vertical "!!"/"!?" read as katakana ri-ri / the kanji 居 after a phrase.
      .replace(
        new RegExp(
          `(?<=[\\p{Script=Hiragana}\\p{Script=Katakana}\\p{Script=Han}ー…])リリ${END}`,
          'gu',
        ),
        '!!',
      )
      .replace(
        new RegExp(`(?<=[\\p{Script=Hiragana}\\p{Script=Katakana}ー…!?！？])居${END}`, 'gu'),
        '!?',
      )
      .replace(/[!！]{2}/g, '!!')
      // A heart read as a dollar sign (no dollar is lettered in a Japanese or Chinese bubble).
      .replace(/[$＄]/g, '♡')
  );
}
