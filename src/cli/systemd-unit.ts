// The systemd unit `gw service unit` prints: `gw serve` for one home, restarted on failure, with
// the vendor keys its config names as ${ENV} read from an environment file, in a sandbox that
// lets it write its home and nothing else. Directives are kept to those that leave Node (its JIT)
// and the engines gw runs as child processes (ffmpeg, espeak-ng, tesseract; sharp in-process)
// working; the comments in the unit say why the stronger ones are absent (docs/decisions.md §16).
import path from "node:path";
import { hasControlCharacter } from "../text/control-characters.js";
import { CliError, UsageError } from "./cli-error.js";

export interface UnitOptions {
  /** Absolute path of the Node binary. */
  node: string;
  /** Absolute path of gw's bin/run.js. */
  script: string;
  /** Absolute path of the gw home. */
  home: string;
  /** User= (and its primary group); absent: the service runs as root. */
  user?: string;
}

/** The environment file beside the config: NAME=value lines for the ${NAME} references of config.json. */
export function environmentFile(home: string): string {
  return path.join(home, "gw.env");
}

/** Home directories systemd's ProtectHome= hides: a path under one needs ProtectHome=read-only. */
const HOME_ROOTS = ["/home", "/root", "/run/user"];

/** What PrivateTmp= replaces with an empty folder of the service's own. */
const TEMP_ROOTS = ["/tmp", "/var/tmp"];

const isUnder = (file: string, roots: readonly string[]) => roots.some((root) => file === root || file.startsWith(`${root}/`));

/** The paths of the unit (home, Node, gw) that a private /tmp would hide from the service. */
export function pathsUnderTemp(options: Pick<UnitOptions, "home" | "node" | "script">): string[] {
  return [options.home, options.node, options.script].filter((file) => isUnder(file, TEMP_ROOTS));
}

export function systemdUnit(options: UnitOptions): string {
  const node = unitPath("the Node binary", options.node);
  const script = unitPath("gw's bin/run.js", options.script);
  const home = unitPath("--home", options.home);
  if (options.user !== undefined && !/^(?:[A-Za-z_][A-Za-z0-9_.-]*|\d+)$/.test(options.user)) {
    throw new UsageError(`--user "${options.user}": expected a user name (letters, digits, _ . -, not starting with a digit or -) or a numeric uid`);
  }
  // ProtectHome=yes would hide a home, Node or gw installed under /home (nvm, a clone): read-only then.
  const underHome = [options.home, options.node, options.script].some((file) => isUnder(file, HOME_ROOTS));
  const underTemp = pathsUnderTemp(options);
  const lines = [
    "# gw as a systemd service, written by `gw service unit`. Install:",
    "#   gw service unit ... | sudo tee /etc/systemd/system/gw.service",
    "#   sudo systemctl daemon-reload && sudo systemctl enable --now gw",
    `# Vendor keys that config.json names as \${NAME} go in ${home}/gw.env as NAME=value lines`,
    "# (mode 600; read by systemd before the service starts; optional). Logs: journalctl -u gw",
    "",
    "[Unit]",
    "Description=gw AI gateway (gw serve)",
    "After=network-online.target",
    "Wants=network-online.target",
    "",
    "[Service]",
    "Type=simple",
    ...(options.user !== undefined ? [`User=${options.user}`] : []),
    `ExecStart=${execArgument(node)} ${execArgument(script)} serve --home ${execArgument(home)}`,
    `WorkingDirectory=${home}`,
    "Environment=NODE_ENV=production",
    `EnvironmentFile=-${home}/gw.env`,
    // SIGTERM drains in-flight requests and streams; a crash or a refused start is retried.
    "Restart=on-failure",
    "RestartSec=5s",
    "UMask=0077",
    "",
    "# Sandbox: the home is the only place the service may write.",
    "NoNewPrivileges=yes",
    "ProtectSystem=strict",
    `ProtectHome=${underHome ? "read-only" : "yes"}`,
    `ReadWritePaths=${home}`,
    // PrivateTmp=yes would give the service an empty /tmp and /var/tmp of its own, without the home (or gw) kept there.
    ...(underTemp.length > 0
      ? [
          `# PrivateTmp is off: ${underTemp.join(" and ")} would be hidden by a private /tmp. systemd-tmpfiles cleans`,
          "# old files out of /tmp and /var/tmp (and /tmp at boot): /var/lib/gw is a lasting place for a home.",
          "PrivateTmp=no",
        ]
      : ["PrivateTmp=yes"]),
    "PrivateDevices=yes",
    "ProtectKernelTunables=yes",
    "ProtectKernelModules=yes",
    "ProtectKernelLogs=yes",
    "ProtectControlGroups=yes",
    "ProtectClock=yes",
    "ProtectHostname=yes",
    "RestrictSUIDSGID=yes",
    "RestrictRealtime=yes",
    "RestrictNamespaces=yes",
    "LockPersonality=yes",
    "SystemCallArchitectures=native",
    // AF_NETLINK: Node lists the network interfaces through it.
    "RestrictAddressFamilies=AF_UNIX AF_INET AF_INET6 AF_NETLINK",
    "# Ports below 1024 (e.g. 443 for --https) without running as root; no other capability.",
    "CapabilityBoundingSet=CAP_NET_BIND_SERVICE",
    "AmbientCapabilities=CAP_NET_BIND_SERVICE",
    "# Not set: MemoryDenyWriteExecute (Node's JIT writes code it then runs) and SystemCallFilter",
    "# (ffmpeg, espeak-ng and libuv make calls a fixed list would have to follow).",
    "",
    "[Install]",
    "WantedBy=multi-user.target",
    "",
  ];
  return lines.join("\n");
}

/**
 * A path as a unit file can hold it: absolute, with no whitespace, quote, backslash or control
 * character (each directive splits or unquotes those its own way), `%` doubled (systemd's specifiers).
 */
function unitPath(what: string, file: string): string {
  if (!path.isAbsolute(file)) throw new CliError(`${what} "${file}" is not an absolute path`);
  if (/[\s"'\\]/.test(file) || hasControlCharacter(file)) {
    throw new CliError(`${what} "${file}" holds a space, quote, backslash or control character, which a unit file cannot carry safely: use a path without`);
  }
  return file.replaceAll("%", "%%");
}

/** An ExecStart word: `$` is doubled too (systemd expands $NAME there). */
function execArgument(file: string): string {
  return file.replaceAll("$", "$$$$");
}
