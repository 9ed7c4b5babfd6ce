// Where a gw home keeps its files. GW_HOME defaults to ~/.gw; every command takes --home.
import os from "node:os";
import path from "node:path";

export interface HomePaths {
  home: string;
  config: string;
  dataDir: string;
  metadata: string;
  usageDir: string;
  blobsDir: string;
  /** `gw serve --https`'s self-signed certificate and its key (mode 0600). */
  tlsDir: string;
  tlsCert: string;
  tlsKey: string;
}

export function resolveHome(explicit?: string): string {
  const home = explicit ?? process.env.GW_HOME ?? path.join(os.homedir(), ".gw");
  return path.resolve(home);
}

export function homePaths(home: string): HomePaths {
  const dataDir = path.join(home, "data");
  return {
    home,
    config: path.join(home, "config.json"),
    dataDir,
    metadata: path.join(dataDir, "metadata.json"),
    usageDir: path.join(dataDir, "usage"),
    blobsDir: path.join(dataDir, "blobs"),
    tlsDir: path.join(home, "tls"),
    tlsCert: path.join(home, "tls", "cert.pem"),
    tlsKey: path.join(home, "tls", "key.pem"),
  };
}
