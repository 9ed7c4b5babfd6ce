// The caller's picture library, as the image endpoints use it: where results go (project and
// lineage), library pictures used as inputs, and storing results. A picture that cannot be
// stored because the storage is full is still returned (it was paid for) without asset_id, with a
// warning for X-Service-Asset-Warning (docs/decisions.md §2).

import { type ImageInput, probeImage } from "../../media/image-input.js";
import type { ImageAssetInfo } from "../../store/file-records.js";
import type { ProjectRecords } from "../../store/project-records.js";
import { AssetNotFoundError } from "../errors.js";
import { MAX_PICTURE_BYTES, MAX_PICTURE_PIXELS, pictureError } from "../media/picture-input.js";
import { FileTooLargeError, StorageOperationsExceededError, StorageQuotaExceededError } from "../storage/storage-errors.js";
import type { StorageService } from "../storage/storage-service.js";
import type { ImageCallContext, ImageResultItem } from "./image-results.js";

export type Lineage = Omit<ImageAssetInfo, "model" | "prompt">;

export interface ProducedPicture {
  bytes: Buffer;
  mediaType: string;
  revisedPrompt?: string;
}

const EXTENSIONS: Record<string, string> = { "image/png": "png", "image/jpeg": "jpg", "image/webp": "webp", "image/gif": "gif" };

export class ImageLibrary {
  constructor(
    private readonly storage: StorageService,
    private readonly projects: ProjectRecords,
  ) {}

  /**
   * A project id the caller does not own (or none) means the caller's default project (docs/decisions.md §5). A
   * parent must be one of the caller's own pictures, else 404 before anything is drawn or billed:
   * a lineage silently dropped would be worse than an error, and another agent's asset answers
   * exactly like a missing one.
   */
  async lineage(agentId: string, request: { projectId?: string | undefined; parentAssetId?: string | undefined }): Promise<Lineage> {
    const project =
      (request.projectId !== undefined ? await this.projects.find(agentId, request.projectId) : undefined) ?? (await this.projects.defaultProject(agentId));
    const lineage: Lineage = { projectId: project.project_id };
    if (request.parentAssetId !== undefined) {
      const parent = await this.storage.findFile(agentId, request.parentAssetId);
      if (!parent?.contentType.startsWith("image/")) throw new AssetNotFoundError("parent_asset_id");
      lineage.parentAssetId = parent.id;
    }
    return lineage;
  }

  /** A library picture as an input, checked like any picture a caller sends; 404 when not the caller's picture. */
  async readPicture(agentId: string, assetId: string, param: string): Promise<ImageInput & { assetId: string }> {
    const found = await this.storage.readFileBytes(agentId, assetId);
    if (!found?.file.contentType.startsWith("image/")) throw new AssetNotFoundError(param);
    try {
      return { ...(await probeImage(found.bytes, { maxBytes: MAX_PICTURE_BYTES, maxPixels: MAX_PICTURE_PIXELS })), assetId: found.file.id };
    } catch (error) {
      throw pictureError(error, param);
    }
  }

  /** Store each picture and build the result items; a full storage leaves a picture without asset_id. */
  async store(
    context: ImageCallContext,
    pictures: readonly ProducedPicture[],
    info: { lineage: Lineage; model: string; prompt: string; revisedPrompt?: string },
  ): Promise<{ data: ImageResultItem[]; warning?: string }> {
    const data: ImageResultItem[] = [];
    let warning: string | undefined;
    for (const [index, picture] of pictures.entries()) {
      const item: ImageResultItem = { b64_json: picture.bytes.toString("base64"), media_type: picture.mediaType };
      const revised = picture.revisedPrompt ?? info.revisedPrompt;
      if (revised !== undefined) item.revised_prompt = revised;
      const kept = await this.keep(
        context,
        { filename: `image-${context.requestId}-${index + 1}.${EXTENSIONS[picture.mediaType] ?? "bin"}`, contentType: picture.mediaType, bytes: picture.bytes },
        { ...info.lineage, model: info.model, prompt: info.prompt },
      );
      if ("assetId" in kept) item.asset_id = kept.assetId;
      else warning = kept.warning;
      data.push(item);
    }
    return warning === undefined ? { data } : { data, warning };
  }

  /** Keep one produced file (a picture, synthesized speech) in the library; a full storage answers a warning instead of an asset id. */
  async keep(
    context: ImageCallContext,
    file: { filename: string; contentType: string; bytes: Buffer },
    asset: ImageAssetInfo,
  ): Promise<{ assetId: string } | { warning: string }> {
    try {
      const stored = await this.storage.storeBytes(context.caller.agent.id, context.plan, { ...file, image: asset });
      return { assetId: stored.id };
    } catch (error) {
      if (!(error instanceof StorageQuotaExceededError || error instanceof StorageOperationsExceededError || error instanceof FileTooLargeError)) throw error;
      return { warning: `Not saved to your library: ${error.message}` };
    }
  }
}
