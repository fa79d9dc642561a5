/**
 * The comic lettering font for Latin text (issue 32 item 5): Comic Neue
 * (SIL Open Font License), from the `@fontsource/comic-neue` npm package's
 * WOFF2 files, registered with the canvas once. CJK text keeps the system's
 * Noto CJK fonts (renderer.ts `CJK_FONTS`).
 */
import { createRequire } from 'node:module';
import { GlobalFonts } from '@napi-rs/canvas';

export const COMIC_FONT = 'Comic Neue';

let registered: boolean | null = null;

/** `Comic Neue` once its files are registered, or null when the package is missing. */
export function comicFont(): string | null {
  if (registered === null) {
    const require = createRequire(import.meta.url);
    try {
      for (const weight of ['400-normal', '700-normal', '400-italic', '700-italic'])
        GlobalFonts.registerFromPath(
          require.resolve(`@fontsource/comic-neue/files/comic-neue-latin-${weight}.woff2`),
          COMIC_FONT,
        );
      registered = true;
    } catch {
      registered = false;
    }
  }
  return registered ? COMIC_FONT : null;
}

/** Text the font's Latin subset can set: Latin-1, and general punctuation and symbols. */
export function latinOnly(content: string): boolean {
  return /^[\u0020-\u00ff\n\r\t\u0131\u0152\u0153\u02c6\u02da\u02dc\u2000-\u206f\u20ac\u2122\u2212]+$/u.test(
    content,
  );
}
