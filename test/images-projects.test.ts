// Projects (GET/POST /v1/projects, a lazy default per agent) and the lineage every generated
// picture records in the caller's library: project_id (default when omitted or not owned),
// parent_asset_id (the caller's own picture, else 404 before anything is drawn), model, prompt.
import { promises as fs } from "node:fs";
import path from "node:path";
import test from "ava";
import { homePaths } from "../src/config/paths.js";
import type { FileRecord } from "../src/store/file-records.js";
import { type FakeOpenAIImages, startFakeOpenAIImages } from "./fakes/openai-images.js";
import { addKey, makeHome, startTestGateway, type TestGateway } from "./helpers/gateway-harness.js";

interface Setup {
  gateway: TestGateway;
  openai: FakeOpenAIImages;
  keys: { a: string; b: string };
}

interface Project {
  project_id: string;
  name: string;
  isDefault: boolean;
  createdAt: string;
}

interface ErrorEnvelope {
  error: { message: string; type: string; code: string; param?: string };
}

async function withSetup(run: (setup: Setup) => Promise<void>): Promise<void> {
  const openai = await startFakeOpenAIImages();
  const home = await makeHome((config) => {
    config.providers = { openai: { type: "openai", baseUrl: openai.url, apiKey: "test-key", upstream: { retries: 0 } } };
    config.tools.image = { default: "openai/gpt-image-1", allow: [] };
  });
  const keys = { a: await addKey(home, "agent-a", "pro"), b: await addKey(home, "agent-b", "pro") };
  const gateway = await startTestGateway(home);
  try {
    await run({ gateway, openai, keys });
  } finally {
    await gateway.shutdown();
    await openai.close();
  }
}

async function call(gateway: TestGateway, key: string, method: string, pathname: string, body?: unknown): Promise<{ status: number; body: unknown }> {
  const init: RequestInit = { method, headers: { authorization: `Bearer ${key}`, "content-type": "application/json" } };
  if (body !== undefined) init.body = typeof body === "string" ? body : JSON.stringify(body);
  const response = await fetch(`${gateway.url}${pathname}`, init);
  return { status: response.status, body: await response.json() };
}

async function listProjects(gateway: TestGateway, key: string): Promise<Project[]> {
  const { status, body } = await call(gateway, key, "GET", "/v1/projects");
  if (status !== 200) throw new Error(`GET /v1/projects ${status} ${JSON.stringify(body)}`);
  return (body as { data: Project[] }).data;
}

async function generate(
  gateway: TestGateway,
  key: string,
  body: Record<string, unknown>,
): Promise<{ status: number; body: { data?: Array<{ asset_id?: string }>; error?: ErrorEnvelope["error"] } }> {
  const result = await call(gateway, key, "POST", "/v1/image/generations", body);
  return result as { status: number; body: { data?: Array<{ asset_id?: string }>; error?: ErrorEnvelope["error"] } };
}

/** The stored-file record of an asset, read from disk as the server wrote it. */
async function assetRecord(gateway: TestGateway, assetId: string): Promise<FileRecord> {
  const records = path.join(homePaths(gateway.home).dataDir, "storage", "records");
  for (const agent of await fs.readdir(records)) {
    const file = path.join(records, agent, `${assetId}.json`);
    try {
      return JSON.parse(await fs.readFile(file, "utf8")) as FileRecord;
    } catch {}
  }
  throw new Error(`no record for ${assetId}`);
}

test("GET /v1/projects creates the default project once; POST adds named projects per agent", async (t) => {
  await withSetup(async ({ gateway, keys }) => {
    const first = await listProjects(gateway, keys.a);
    t.is(first.length, 1);
    t.true(first[0]!.isDefault);
    t.regex(first[0]!.project_id, /^proj_/);
    t.false(Number.isNaN(Date.parse(first[0]!.createdAt)));
    t.deepEqual(await listProjects(gateway, keys.a), first);

    const created = await call(gateway, keys.a, "POST", "/v1/projects", { name: "  Posters  " });
    t.is(created.status, 201);
    const project = created.body as Project;
    t.is(project.name, "Posters");
    t.false(project.isDefault);
    t.regex(project.project_id, /^proj_/);

    const after = await listProjects(gateway, keys.a);
    t.deepEqual(
      after.map((entry) => entry.project_id),
      [first[0]!.project_id, project.project_id],
    );

    // Another agent sees only its own default.
    const other = await listProjects(gateway, keys.b);
    t.is(other.length, 1);
    t.true(other[0]!.isDefault);
    t.not(other[0]!.project_id, first[0]!.project_id);

    // Persisted in a small per-agent file.
    const directory = path.join(homePaths(gateway.home).dataDir, "projects");
    const files = (await fs.readdir(directory)).filter((name) => name.endsWith(".json"));
    t.is(files.length, 2);
    const documents = await Promise.all(
      files.map(async (name) => JSON.parse(await fs.readFile(path.join(directory, name), "utf8")) as { projects: Project[] }),
    );
    t.true(documents.some((document) => JSON.stringify(document.projects) === JSON.stringify(after)));
  });
});

test("POST /v1/projects: missing, empty, non-string or too long name is 400 in the gateway envelope", async (t) => {
  await withSetup(async ({ gateway, keys }) => {
    for (const body of [{}, { name: "" }, { name: "   " }, { name: 7 }, { name: "x".repeat(101) }]) {
      const { status, body: response } = await call(gateway, keys.a, "POST", "/v1/projects", body);
      t.is(status, 400, JSON.stringify(body));
      const error = (response as ErrorEnvelope).error;
      t.is(error.type, "invalid_request_error");
      t.is(error.code, "invalid_parameter");
      t.is(error.param, "name");
      t.is(typeof error.message, "string");
    }
    const bad = await call(gateway, keys.a, "POST", "/v1/projects", "{not json");
    t.is(bad.status, 400);
    t.is((bad.body as ErrorEnvelope).error.code, "invalid_json");
    const unauthenticated = await fetch(`${gateway.url}/v1/projects`);
    t.is(unauthenticated.status, 401);
    t.is((await call(gateway, keys.a, "DELETE", "/v1/projects")).status, 405);
  });
});

test("generated pictures record project, lineage, model and prompt; default project when omitted", async (t) => {
  await withSetup(async ({ gateway, keys }) => {
    const created = (await call(gateway, keys.a, "POST", "/v1/projects", { name: "Foxes" })).body as Project;
    const defaultProject = (await listProjects(gateway, keys.a)).find((project) => project.isDefault)!;

    const plain = await generate(gateway, keys.a, { prompt: "a red fox", output_format: "png" });
    t.is(plain.status, 200, JSON.stringify(plain.body));
    const first = plain.body.data![0]!.asset_id!;
    const firstRecord = await assetRecord(gateway, first);
    t.deepEqual(firstRecord.image, { projectId: defaultProject.project_id, model: "openai/gpt-image-1", prompt: "a red fox" });

    const child = await generate(gateway, keys.a, { prompt: "the fox at night", project_id: created.project_id, parent_asset_id: first, n: 2 });
    t.is(child.status, 200, JSON.stringify(child.body));
    t.is(child.body.data!.length, 2);
    for (const item of child.body.data!) {
      const record = await assetRecord(gateway, item.asset_id!);
      t.deepEqual(record.image, { projectId: created.project_id, parentAssetId: first, model: "openai/gpt-image-1", prompt: "the fox at night" });
    }
  });
});

test("another agent's or an unknown project id falls back to the caller's default project", async (t) => {
  await withSetup(async ({ gateway, keys }) => {
    const foreign = (await call(gateway, keys.b, "POST", "/v1/projects", { name: "B's" })).body as Project;
    const foreignPicture = await generate(gateway, keys.b, { prompt: "b", project_id: foreign.project_id });
    const foreignAgent = (await assetRecord(gateway, foreignPicture.body.data![0]!.asset_id!)).agentId;
    const ownDefault = (await listProjects(gateway, keys.a))[0]!;
    for (const projectId of [foreign.project_id, "proj_nope", "../../etc"]) {
      const result = await generate(gateway, keys.a, { prompt: "x", project_id: projectId });
      t.is(result.status, 200, JSON.stringify(result.body));
      const record = await assetRecord(gateway, result.body.data![0]!.asset_id!);
      t.is(record.image?.projectId, ownDefault.project_id);
      t.not(record.agentId, foreignAgent);
    }
  });
});

test("parent_asset_id that is not the caller's picture is 404 before anything is drawn", async (t) => {
  await withSetup(async ({ gateway, openai, keys }) => {
    const theirs = await generate(gateway, keys.b, { prompt: "b's picture" });
    t.is(theirs.status, 200);
    const foreignAsset = theirs.body.data![0]!.asset_id!;
    const drawn = openai.requests.length;
    for (const parent of [foreignAsset, "file_01ARZ3NDEKTSV4RRFFQ69G5FAV", "not-an-id"]) {
      const result = await generate(gateway, keys.a, { prompt: "x", parent_asset_id: parent });
      t.is(result.status, 404, JSON.stringify(result.body));
      t.is(result.body.error?.code, "asset_not_found");
      t.is(result.body.error?.param, "parent_asset_id");
    }
    t.is(openai.requests.length, drawn);
  });
});

test("concurrent POST /v1/projects lose no project and create one default", async (t) => {
  await withSetup(async ({ gateway, keys }) => {
    const names = Array.from({ length: 12 }, (_, index) => `p${index}`);
    const results = await Promise.all(names.map((name) => call(gateway, keys.a, "POST", "/v1/projects", { name })));
    t.true(results.every((result) => result.status === 201));
    const listed = await listProjects(gateway, keys.a);
    t.is(listed.filter((project) => project.isDefault).length, 1);
    t.deepEqual(
      listed
        .filter((project) => !project.isDefault)
        .map((project) => project.name)
        .sort(),
      [...names].sort(),
    );
    t.is(new Set(listed.map((project) => project.project_id)).size, listed.length);
  });
});
