import { describe, expect, it } from 'vitest';
import { correctEnglish } from '../../../src/doors/scene/engines/lexicon.js';

describe('English OCR correction by lexicon (issue 32)', () => {
  it('turns systematic misreadings of comic capitals into the common word they stand for', () => {
    expect(correctEnglish('SO FHEY MET ONCE AGAIN TO QIND OUT')).toBe(
      'SO THEY MET ONCE AGAIN TO FIND OUT',
    );
    expect(correctEnglish('A WESTERN LROG NAWED BURT')).toBe('A WESTERN FROG NAMED BURT');
    expect(correctEnglish('HE STARTED TO ENSOY IT,')).toBe('HE STARTED TO ENJOY IT,');
    expect(correctEnglish('HHEY WOULD NOT CHANGE ANYFHING.')).toBe(
      'THEY WOULD NOT CHANGE ANYTHING.',
    );
    expect(correctEnglish('FO LOOK POR OTHER')).toBe('TO LOOK FOR OTHER');
  });

  it('keeps punctuation around a word and a possessive after it', () => {
    expect(correctEnglish('"PROGS," SAID')).toBe('"FROGS," SAID');
    // PLIES is a rare word (ply): a common one a single swap away wins.
    expect(correctEnglish("FU'S SYNFHETIC PLIES")).toBe("FU'S SYNTHETIC FLIES");
  });

  it('reads misreadings in either case and keeps the case each letter was read in', () => {
    expect(correctEnglish('ln a large pot, there were fhree Progs:')).toBe(
      'In a large pot, there were three Frogs:',
    );
    expect(correctEnglish('a Western\nlrog\nnawed Burt')).toBe('a Western\nfrog\nnamed Burt');
    expect(correctEnglish('Apter a long night, Dinally')).toBe('After a long night, Finally');
  });

  it('joins a word the recognizer split in two', () => {
    expect(correctEnglish('HE WOU LD NOT, A BOI L. WEL L')).toBe('HE WOULD NOT, A BOIL. WELL');
    // OP is a rare word; OF is a swap away.
    expect(correctEnglish('OUT O P HIS REACH')).toBe('OUT OF HIS REACH');
    // A name split is left split: the two make no word.
    expect(correctEnglish('BU RT SAID')).toBe('BU RT SAID');
    // Two common words are never joined.
    expect(correctEnglish('GO TO IT')).toBe('GO TO IT');
  });

  it('leaves known words, names, numbers, lower case and unfixable tokens alone', () => {
    // Common words are never swapped, even when a swap makes another word.
    expect(correctEnglish('FLIES PLAN LAST HAT FOLD')).toBe('FLIES PLAN LAST HAT FOLD');
    // Names and tokens no swap turns into a word.
    expect(correctEnglish('DODJI BURT FU XQZW')).toBe('DODJI BURT FU XQZW');
    expect(correctEnglish('45 °C (113 °F)')).toBe('45 °C (113 °F)');
    expect(correctEnglish('')).toBe('');
  });
});
