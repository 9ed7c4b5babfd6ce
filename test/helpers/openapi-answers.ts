// Checks answers against an OpenAPI 3.1 document: the schema of the operation's status, by the
// path template the request matched, validated with ajv (JSON Schema 2020-12, as OpenAPI 3.1 has it).
import { Ajv2020 } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";

interface OpenApiDocument {
  components: unknown;
  paths: Record<string, Record<string, { responses: Record<string, { content?: Record<string, { schema: object }> }> }>>;
}

export class OpenApiAnswers {
  private readonly ajv = new Ajv2020({ strict: false, allErrors: true });
  private readonly templates: Array<{ template: string; pattern: RegExp }>;

  constructor(private readonly document: OpenApiDocument) {
    addFormats.default(this.ajv);
    this.templates = Object.keys(document.paths).map((template) => ({
      template,
      pattern: new RegExp(`^${template.replace(/\{[^}]+\}/g, "[^/]+")}$`),
    }));
  }

  /** Problems of this answer against the document (empty when it conforms); throws when the document has no such answer. */
  problems(method: string, pathname: string, status: number, body: unknown): string[] {
    const template = this.templates.find(({ pattern }) => pattern.test(pathname))?.template;
    if (!template) throw new Error(`the OpenAPI document has no path for ${pathname}`);
    const operation = this.document.paths[template]![method.toLowerCase()];
    if (!operation) throw new Error(`the OpenAPI document has no ${method} ${template}`);
    const schema = operation.responses[String(status)]?.content?.["application/json"]?.schema;
    if (!schema) throw new Error(`the OpenAPI document has no ${status} answer for ${method} ${template}`);
    const validate = this.ajv.compile({ ...schema, components: this.document.components });
    return validate(body) ? [] : (validate.errors ?? []).map((error) => `${error.instancePath || "/"} ${error.message}`);
  }
}
