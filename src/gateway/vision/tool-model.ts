// Which model a picture-reading tool uses: the request's `model` when the operator allowlisted
// it in `tools.<tool>` (the default counts as allowed), else the tool's default. A tool with no
// model at all is an operator matter (503), a model outside the list the caller's (400).
import type { Config } from "../../config/resolved-config.js";
import { InvalidRequestError, ProviderNotConfiguredError } from "../errors.js";
import { allowedModelIds } from "../models/tool-allowlist.js";

export type VisionToolName = "describe" | "ocr";

const TOOL_LABELS: Record<VisionToolName, string> = { describe: "Image description", ocr: "OCR" };

export function chooseToolModel(config: Pick<Config, "tools">, toolName: VisionToolName, requested: string | undefined): string {
  const allowed = allowedModelIds(config, toolName);
  const first = allowed[0];
  if (first === undefined) {
    throw new ProviderNotConfiguredError(`${TOOL_LABELS[toolName]} is not configured on this gateway: tools.${toolName} names no model.`);
  }
  const id = requested ?? config.tools[toolName]?.default ?? first;
  if (!allowed.includes(id)) {
    throw new InvalidRequestError(`The model \`${id}\` is not allowed for ${TOOL_LABELS[toolName].toLowerCase()} here; allowed: ${allowed.join(", ")}.`, {
      param: "model",
      code: "model_not_allowed",
    });
  }
  return id;
}
