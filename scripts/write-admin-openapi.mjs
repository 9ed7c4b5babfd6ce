// Writes docs/admin-openapi.json, the admin API's OpenAPI document as the server serves it
// (src/server/admin/admin-openapi.ts), after a build.
import { writeFileSync } from "node:fs";
import { adminOpenApi } from "../dist/src/server/admin/admin-openapi.js";

writeFileSync(new URL("../docs/admin-openapi.json", import.meta.url), `${JSON.stringify(adminOpenApi, null, 2)}\n`);
