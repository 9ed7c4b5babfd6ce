// Serve renewed certificate files without a restart (certbot renewals). The files are polled with
// fs.watchFile, not fs.watch: certbot swaps the symlinks in live/ for new ones, and a rename or
// symlink swap is invisible to an inotify watch on the old file, while a stat of the path sees
// the new file. A pair that does not read, parse and match (half-written, garbage, a key of
// another certificate) is reported and the certificate already served stays in force; the
// next change is tried again.
import { type StatsListener, unwatchFile, watchFile } from "node:fs";
import { readTlsPair, type TlsPair } from "./tls-pair.js";

export interface TlsReloadOptions {
  certFile: string;
  keyFile: string;
  /** How often the files are looked at (milliseconds). */
  intervalMs: number;
  /** The pair now served; replaced on each successful reload. */
  current: TlsPair;
  apply: (pair: TlsPair) => void;
  onReload: (pair: TlsPair) => void;
  onRejected: (message: string, kept: TlsPair) => void;
}

/** Both files change within moments of each other; one reload for the two. */
const SETTLE_MS = 100;

export function watchTlsPair(options: TlsReloadOptions): { close(): void } {
  let current = options.current;
  let timer: NodeJS.Timeout | null = null;
  const reload = () => {
    timer = null;
    let pair: TlsPair;
    try {
      pair = readTlsPair(options.certFile, options.keyFile);
    } catch (error) {
      options.onRejected((error as Error).message, current);
      return;
    }
    if (pair.cert.equals(current.cert) && pair.key.equals(current.key)) return;
    try {
      options.apply(pair);
    } catch (error) {
      options.onRejected((error as Error).message, current);
      return;
    }
    current = pair;
    options.onReload(pair);
  };
  const changed: StatsListener = (now, before) => {
    if (now.mtimeMs === before.mtimeMs && now.ino === before.ino && now.size === before.size) return;
    if (timer) clearTimeout(timer);
    timer = setTimeout(reload, SETTLE_MS);
    timer.unref();
  };
  const watched = { persistent: false, interval: options.intervalMs };
  watchFile(options.certFile, watched, changed);
  watchFile(options.keyFile, watched, changed);
  return {
    close() {
      unwatchFile(options.certFile, changed);
      unwatchFile(options.keyFile, changed);
      if (timer) clearTimeout(timer);
    },
  };
}
