/**
 * Exports (spec/scene.md "Project on disk"): `khr` is a zip of the
 * project folder without the lock and caches (`exports/`, blob temp files),
 * taken after compacting the history so the snapshot holds everything;
 * `rendered`/`inpainted` are PNG pages (one file, or a zip for several);
 * `pdf` is one PDF with a page per rendered page, at the page's size. A
 * `khr` comes back in through khr-import.ts; export-cache.ts keeps the files.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { zipSync } from 'fflate';
import { z } from 'zod';
import { AirlockError } from '../../../kernel/index.js';
import { EXPORTS_DIR } from './export-cache.js';
import { asPng, blobBytes, imageNode } from './images.js';
import type { Page } from '../model/model.js';
import { LOCK_FILE, OPLOG_LOCK, type Project } from '../project/project.js';
import { slugify } from '../project/roots.js';

export const ExportFormat = z.enum(['khr', 'rendered', 'inpainted', 'pdf']);
export type ExportFormat = z.infer<typeof ExportFormat>;

export interface ExportedFile {
  bytes: Uint8Array;
  contentType: string;
  filename: string;
}

/** What a `khr` leaves out, and an import skips. */
export const KHR_SKIPPED = new Set([
  LOCK_FILE,
  OPLOG_LOCK,
  EXPORTS_DIR,
  'snapshot.json.tmp',
  'blobs/tmp',
]);

function selectPages(project: Project, ids?: string[]): Page[] {
  const pages = project.history.state.pages;
  if (!ids) return pages;
  return ids.map((id) => {
    const page = pages.find((p) => p.id === id);
    if (!page)
      throw new AirlockError('notFound', `No page ${id}; read the scene for page ids.`, {
        page: id,
      });
    return page;
  });
}

async function pageImage(project: Project, page: Page, role: 'rendered' | 'inpainted') {
  const found = imageNode(page, role);
  if (!found)
    throw new AirlockError(
      'notFound',
      `Page '${page.name}' (${page.id}) has no ${role} image; run the ${role === 'rendered' ? 'renderer' : 'fill'} step first.`,
      { page: page.id },
    );
  return asPng(await blobBytes(project.blobs, found.image.blob));
}

function walk(dir: string, base = dir, out: Record<string, Uint8Array> = {}) {
  for (const entry of readdirSync(dir)) {
    const path = join(dir, entry);
    const rel = relative(base, path).split(sep).join('/');
    if (KHR_SKIPPED.has(rel)) continue;
    if (statSync(path).isDirectory()) walk(path, base, out);
    else out[rel] = new Uint8Array(readFileSync(path));
  }
  return out;
}

export async function exportProject(
  project: Project,
  format: ExportFormat,
  pageIds?: string[],
  shared = false,
): Promise<ExportedFile> {
  const slug = slugify(project.history.state.project.name);
  if (format === 'khr') {
    if (shared)
      throw new AirlockError(
        'unavailable',
        "Export format 'khr' is not offered in scale-out mode (the project lives in the store); export 'rendered', 'inpainted' or 'pdf', or use an embedded workspace.",
        { field: 'format' },
      );
    await project.history.compact();
    return {
      bytes: zipSync(walk(project.dir)),
      contentType: 'application/zip',
      filename: `${slug}.khr`,
    };
  }
  const pages = selectPages(project, pageIds);
  if (!pages.length)
    throw new AirlockError('notFound', 'The project has no pages to export; upload pages first.');
  if (format === 'pdf') {
    const pdf = await (await import('pdf-lib')).PDFDocument.create();
    pdf.setTitle(project.history.state.project.name);
    for (const page of pages) {
      const image = await pdf.embedPng(await pageImage(project, page, 'rendered'));
      pdf.addPage([page.width, page.height]).drawImage(image, {
        x: 0,
        y: 0,
        width: page.width,
        height: page.height,
      });
    }
    return { bytes: await pdf.save(), contentType: 'application/pdf', filename: `${slug}.pdf` };
  }
  const files = await Promise.all(pages.map((p) => pageImage(project, p, format)));
  if (files.length === 1)
    return {
      bytes: files[0]!,
      contentType: 'image/png',
      filename: `${slug}-${slugify(pages[0]!.name)}-${format}.png`,
    };
  const entries: Record<string, Uint8Array> = {};
  pages.forEach((p, i) => {
    entries[`${String(i + 1).padStart(3, '0')}-${slugify(p.name)}.png`] = files[i]!;
  });
  return {
    bytes: zipSync(entries),
    contentType: 'application/zip',
    filename: `${slug}-${format}.zip`,
  };
}
