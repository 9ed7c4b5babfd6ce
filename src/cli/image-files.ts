// Where `gw image generate` writes pictures: -o FILE (FILE-1.ext, FILE-2.ext ... for several),
// `-o -` for stdout (one picture only), else image-<asset id or index>.<ext> in the current
// directory, never overwriting a file there. The extension always follows the picture's media_type.
import path from "node:path";
import type { OutputTarget } from "./output-file.js";

const EXTENSIONS: Record<string, string> = { "image/png": "png", "image/jpeg": "jpg", "image/webp": "webp", "image/svg+xml": "svg", "image/gif": "gif" };
/** File extensions that name an output_format. */
const FORMATS: Record<string, string> = { png: "png", jpg: "jpeg", jpeg: "jpeg", webp: "webp", svg: "svg" };

export function extensionOf(mediaType: string): string {
  const type = mediaType.split(";")[0]!.trim().toLowerCase();
  return EXTENSIONS[type] ?? (type.replace(/^image\//, "").replace(/[^a-z0-9]/g, "") || "bin");
}

/** The output_format a target's extension names (`-o cat.png` -> png), if any. */
export function formatOfTarget(target: string): string | undefined {
  const extension = path.extname(target).slice(1).toLowerCase();
  return FORMATS[extension];
}

export function pictureTargets(pictures: Array<{ media_type: string; asset_id?: string }>, output: string | undefined): OutputTarget[] {
  return pictures.map((picture, index) => {
    const extension = extensionOf(picture.media_type);
    if (output === undefined) return { path: `image-${picture.asset_id ?? index + 1}.${extension}`, exclusive: true };
    const known = formatOfTarget(output) !== undefined;
    const stem = known ? output.slice(0, -path.extname(output).length) : output;
    if (pictures.length === 1)
      return { path: known && sameFormat(path.extname(output).slice(1), extension) ? output : `${stem}.${extension}`, exclusive: false };
    return { path: `${stem}-${index + 1}.${extension}`, exclusive: false };
  });
}

function sameFormat(a: string, b: string): boolean {
  return (FORMATS[a.toLowerCase()] ?? a.toLowerCase()) === (FORMATS[b.toLowerCase()] ?? b.toLowerCase());
}
