// Regenerates config/schema.json from the zod schema (src/config/config-schema.ts) after a build.
import { writeFileSync } from "node:fs";
import { z } from "zod";
import { configSchema } from "../dist/src/config/config-schema.js";

const schema = z.toJSONSchema(configSchema, { io: "input", unrepresentable: "any" });
schema.title = "gw config";
writeFileSync(new URL("../config/schema.json", import.meta.url), `${JSON.stringify(schema, null, 2)}\n`);
