// Bodies of the image and project endpoints as the client sends and reads them.

export interface ImageGenerationRequest {
  prompt: string;
  model?: string;
  n?: number;
  aspect_ratio?: string;
  output_format?: string;
  seed?: number;
  quality?: string;
  background?: string;
  resolution?: string;
  size?: string;
  output_compression?: number;
  negative_prompt?: string;
  cfg_scale?: number;
  style_preset?: string;
  enhance_prompt?: boolean;
  project_id?: string;
  parent_asset_id?: string;
}

/** Roles a picture plays in an edit (POST /v1/image/edits). */
export type ImageRole = "edit" | "subject" | "reference";

/** One edit input: a URL or data: URL (the model's default role), or an object naming its role. */
export type ImageEditInput = string | { url: string; role?: ImageRole } | { asset_id: string; role?: ImageRole };

/** The JSON form of POST /v1/image/edits: the generation parameters plus up to four pictures. */
export interface ImageEditRequest extends Omit<ImageGenerationRequest, "enhance_prompt"> {
  images: ImageEditInput[];
}

export interface ImageResultItem {
  b64_json: string;
  media_type: string;
  revised_prompt?: string;
  asset_id?: string;
}

export interface ImageResultBody {
  id: string;
  created: number;
  model: string;
  data: ImageResultItem[];
  refusal?: string;
  enhanced_prompt?: string;
  timing?: { total_ms: number; upstream_ms: number };
}

export interface ImageCatalogModel {
  id: string;
  name: string;
  description?: string;
  operations: string[];
  freeTier: boolean;
  constraints: { aspectRatios?: string[]; formats?: string[]; [key: string]: unknown };
  pricing: unknown;
}

export interface ImageCatalogBody {
  models: ImageCatalogModel[];
  planLimits: Record<string, { maxImages: number; maxResolution: string }>;
}

export interface ProjectBody {
  project_id: string;
  name: string;
  isDefault: boolean;
  createdAt: string;
}

export interface ProjectListBody {
  data: ProjectBody[];
}
