// `gw service unit`: the systemd unit for `gw serve`, its settings read back directive by
// directive, paths a unit file cannot carry refused, and, where this machine has
// systemd-analyze, the printed unit verified by it.
import { execFile } from "node:child_process";
import { realpathSync, writeFileSync } from "node:fs";
import path from "node:path";
import test from "ava";
import { CliError } from "../src/cli/cli-error.js";
import { systemdUnit } from "../src/cli/systemd-unit.js";
import { gw, projectRoot } from "./helpers/gateway-harness.js";
import { tempDir } from "./helpers/temp-dirs.js";

/** section -> directive -> values (a directive may repeat). */
function directives(unit: string): Map<string, Map<string, string[]>> {
  const sections = new Map<string, Map<string, string[]>>();
  let current: Map<string, string[]> | undefined;
  for (const line of unit.split("\n")) {
    if (line === "" || line.startsWith("#")) continue;
    const header = /^\[(\w+)\]$/.exec(line);
    if (header) {
      current = new Map();
      sections.set(header[1]!, current);
      continue;
    }
    const equals = line.indexOf("=");
    if (!current || equals < 1) throw new Error(`not a directive: ${line}`);
    const name = line.slice(0, equals);
    current.set(name, [...(current.get(name) ?? []), line.slice(equals + 1)]);
  }
  return sections;
}

function setting(unit: string, section: string, name: string): string | undefined {
  const values = directives(unit).get(section)?.get(name);
  return values?.at(-1);
}

const base = { node: "/usr/bin/node", script: "/opt/gw/bin/run.js", home: "/var/lib/gw" };

test("the unit runs gw serve for the home, restarts it on failure and sandboxes it", (t) => {
  const unit = systemdUnit({ ...base, user: "gw" });
  const service = (name: string) => setting(unit, "Service", name);
  t.is(setting(unit, "Unit", "Description"), "gw AI gateway (gw serve)");
  t.is(setting(unit, "Unit", "After"), "network-online.target");
  t.is(setting(unit, "Unit", "Wants"), "network-online.target");
  t.is(service("ExecStart"), "/usr/bin/node /opt/gw/bin/run.js serve --home /var/lib/gw");
  t.is(service("User"), "gw");
  t.is(service("Restart"), "on-failure");
  t.is(service("RestartSec"), "5s");
  t.is(service("EnvironmentFile"), "-/var/lib/gw/gw.env", "optional: the leading - lets a home without vendor keys start");
  t.is(service("Environment"), "NODE_ENV=production");
  t.is(service("WorkingDirectory"), "/var/lib/gw");
  const sandbox: Record<string, string> = {
    NoNewPrivileges: "yes",
    ProtectSystem: "strict",
    ReadWritePaths: "/var/lib/gw",
    ProtectHome: "yes",
    PrivateTmp: "yes",
    PrivateDevices: "yes",
    ProtectKernelTunables: "yes",
    ProtectKernelModules: "yes",
    ProtectControlGroups: "yes",
    RestrictSUIDSGID: "yes",
    LockPersonality: "yes",
    RestrictNamespaces: "yes",
    UMask: "0077",
    CapabilityBoundingSet: "CAP_NET_BIND_SERVICE",
  };
  for (const [name, value] of Object.entries(sandbox)) t.is(service(name), value, name);
  // Node's JIT needs writable-then-executable memory; a syscall list would break its engines.
  t.is(service("MemoryDenyWriteExecute"), undefined);
  t.is(service("SystemCallFilter"), undefined);
  t.is(setting(unit, "Install", "WantedBy"), "multi-user.target");
  t.true(unit.endsWith("\n"));
});

test("without --user the unit names no user; a home, Node or gw under /home leaves /home read-only instead of hidden", (t) => {
  t.is(setting(systemdUnit(base), "Service", "User"), undefined);
  for (const paths of [
    { ...base, home: "/home/ada/.gw" },
    { ...base, node: "/home/ada/.nvm/versions/node/v22.1.0/bin/node" },
    { ...base, script: "/root/gw/bin/run.js" },
  ]) {
    const unit = systemdUnit(paths);
    t.is(setting(unit, "Service", "ProtectHome"), "read-only", JSON.stringify(paths));
    t.is(setting(unit, "Service", "ReadWritePaths"), paths.home);
  }
});

test("systemd's specifiers and variables in paths are escaped; paths a unit cannot carry are refused", (t) => {
  const unit = systemdUnit({ ...base, home: "/srv/gw%data$1" });
  t.is(setting(unit, "Service", "ExecStart"), "/usr/bin/node /opt/gw/bin/run.js serve --home /srv/gw%%data$$1");
  t.is(setting(unit, "Service", "ReadWritePaths"), "/srv/gw%%data$1");
  t.is(setting(unit, "Service", "EnvironmentFile"), "-/srv/gw%%data$1/gw.env");
  t.throws(() => systemdUnit({ ...base, home: "/srv/my gw" }), { instanceOf: CliError, message: /--home "\/srv\/my gw" holds a space/ });
  t.throws(() => systemdUnit({ ...base, home: "gw-home" }), { instanceOf: CliError, message: /--home "gw-home" is not an absolute path/ });
  t.throws(() => systemdUnit({ ...base, user: "gw; rm" }), { instanceOf: CliError, message: /--user "gw; rm": expected a user name/ });
  t.notThrows(() => systemdUnit({ ...base, user: "998" }));
});

function run(file: string, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(file, args, { encoding: "utf8" }, (error, stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === "number" ? error.code : 1) : 0, stdout, stderr });
    });
  });
}

test("gw service unit prints the unit for this Node and this gw, and systemd-analyze accepts it", async (t) => {
  const home = tempDir("gw-unit-");
  const result = await gw(["service", "unit", "--user", "gw", "--home", home]);
  t.is(result.code, 0, result.stderr);
  t.is(
    setting(result.stdout, "Service", "ExecStart"),
    `${realpathSync(process.execPath)} ${realpathSync(path.join(projectRoot, "bin/run.js"))} serve --home ${home}`,
  );
  t.is(setting(result.stdout, "Service", "User"), "gw");
  t.is(setting(result.stdout, "Service", "ReadWritePaths"), home);
  t.regex(result.stderr, new RegExp(`${home} is not a gw home yet: run \`gw init --home ${home}\` as gw`));

  const refused = await gw(["service", "unit", "--home", "/srv/my gw"]);
  t.is(refused.code, 1);
  t.regex(refused.stderr, /holds a space/);
  t.is(refused.stdout, "");

  // Verified where systemd's own checker is installed (a Linux with systemd).
  const analyze = await run("systemd-analyze", ["--version"]);
  if (analyze.code === 0) {
    const file = path.join(home, "gw-test.service");
    writeFileSync(file, result.stdout);
    const verified = await run("systemd-analyze", ["verify", file]);
    t.is(verified.code, 0, verified.stderr);
    t.is(verified.stderr, "", "no directive ignored or unknown");
  }
});
