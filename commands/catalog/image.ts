import { apiKeyFlag, baseUrlFlag, jsonFlag } from "../../src/cli/flags.js";
import { gatewayClient } from "../../src/cli/gateway-client.js";
import { GwCommand } from "../../src/cli/gw-command.js";
import { imagePriceLabel } from "../../src/cli/image-prices.js";
import { printTable } from "../../src/cli/output.js";

export default class CatalogImage extends GwCommand {
  static override description =
    "List the image models this gateway offers (GET /v1/public/image-models; no key needed), with their price in dollars: per picture or per megapixel, by quality where the model prices it so.";
  static override examples = ["<%= config.bin %> catalog image", "<%= config.bin %> catalog image --json | jq '.planLimits'"];
  static override enableJsonFlag = true;
  static override flags = { json: jsonFlag, "api-key": apiKeyFlag, "base-url": baseUrlFlag };

  async run() {
    const { flags } = await this.parse(CatalogImage);
    const body = await gatewayClient(flags, process.env, { keyRequired: false }).imageCatalog();
    return this.shown(body, () => {
      printTable(
        ["ID", "OPERATIONS", "FORMATS", "ASPECT RATIOS", "PRICE"],
        body.models.map((model) => [
          model.id,
          model.operations.join(","),
          (model.constraints.formats ?? []).join(","),
          (model.constraints.aspectRatios ?? []).join(","),
          imagePriceLabel(model.pricing),
        ]),
        "no image models: configure an image provider and allowlist it in tools.image",
      );
    });
  }
}
