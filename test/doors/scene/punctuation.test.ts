/** Punctuation post-correction of manga OCR (issue 32 item 4). */
import { describe, expect, it } from 'vitest';
import { fixPunctuation } from '../../../src/doors/scene/engines/punctuation.js';

describe('punctuation post-correction', () => {
  it('reads a vertical "!!" misread as リリ after a phrase, and leaves the name リリ alone', () => {
    expect(fixPunctuation('待ってリリ', 'ja')).toBe('待って!!');
    expect(fixPunctuation('リリちゃん', 'ja')).toBe('リリちゃん');
  });
  it('reads "!?" misread as 居 at the end of a phrase, and keeps 居 inside a word', () => {
    expect(fixPunctuation('なんだって居', 'ja')).toBe('なんだって!?');
    expect(fixPunctuation('居間にいる', 'ja')).toBe('居間にいる');
  });
  it('drops the colons an ellipsis gains and joins dot runs into one', () => {
    expect(fixPunctuation('それは:…:', 'ja')).toBe('それは…');
    expect(fixPunctuation('まさか...', 'ja')).toBe('まさか…');
  });
  it('reads a heart misread as a dollar sign in Japanese and Chinese, not in English', () => {
    expect(fixPunctuation('好き$', 'ja')).toBe('好き♡');
    expect(fixPunctuation('喜歡$', 'zh')).toBe('喜歡♡');
    expect(fixPunctuation('IT COSTS $5', 'en')).toBe('IT COSTS $5');
  });
});
