// The client endpoint commands use: GW_BASE_URL (or --base-url), else the home's server address;
// GW_API_KEY (or --api-key).
import { existsSync, readFileSync } from "node:fs";
import { GwClient } from "../client/gw-client.js";
import { homePaths, resolveHome } from "../config/paths.js";
import { isObject } from "../json/json-values.js";
import { CliError } from "./cli-error.js";

export interface GatewayFlags {
  home?: string;
  "api-key"?: string;
  "base-url"?: string;
}

export function gatewayClient(flags: GatewayFlags, env: NodeJS.ProcessEnv = process.env, options: { keyRequired?: boolean } = {}): GwClient {
  const apiKey = flags["api-key"] ?? env.GW_API_KEY;
  if (!apiKey && options.keyRequired !== false)
    throw new CliError("no API key: set GW_API_KEY or pass --api-key (create one with `gw keys create --agent NAME`)");
  const baseUrl = flags["base-url"] ?? env.GW_BASE_URL ?? homeServerUrl(flags.home);
  if (!URL.canParse(baseUrl) || !/^https?:$/.test(new URL(baseUrl).protocol))
    throw new CliError(`gateway address "${baseUrl}" is not an http(s) URL (GW_BASE_URL or --base-url)`);
  // The home's self-signed certificate, for the hint when the gateway's is not trusted (`gw serve --https`).
  const certificate = homePaths(resolveHome(flags.home)).tlsCert;
  const selfSignedCertificate = existsSync(certificate) ? certificate : undefined;
  // The CLI's JSON GETs go over node:http: a command's start would otherwise load fetch (plain-get.ts).
  return new GwClient({ baseUrl, plainGets: true, ...(apiKey ? { apiKey } : {}), ...(selfSignedCertificate ? { selfSignedCertificate } : {}) });
}

/**
 * The home's config as raw JSON (as config/load-config.ts readRawConfig reads it, without
 * importing the config schema, zod, that module loads: every endpoint command starts here);
 * undefined when there is none or it cannot be read as JSON (`gw doctor`'s business).
 */
export function homeRawConfig(homeFlag: string | undefined): unknown {
  const file = homePaths(resolveHome(homeFlag)).config;
  if (!existsSync(file)) return undefined;
  try {
    return JSON.parse(readFileSync(file, "utf8"));
  } catch {
    return undefined;
  }
}

/** http://host:port from the home's config; the built-in default when there is none. */
export function homeServerUrl(homeFlag: string | undefined): string {
  let host = "127.0.0.1";
  let port = 8787;
  const raw = homeRawConfig(homeFlag);
  const server = isObject(raw) ? raw.server : undefined;
  if (isObject(server)) {
    if (typeof server.host === "string" && server.host) host = server.host;
    if (typeof server.port === "number" && server.port > 0) port = server.port;
  }
  // A server bound to every interface is reached on loopback.
  if (host === "0.0.0.0" || host === "::") host = "127.0.0.1";
  return `http://${host.includes(":") ? `[${host}]` : host}:${port}`;
}
