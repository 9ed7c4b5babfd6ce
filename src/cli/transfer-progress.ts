// Progress of an upload or download on stderr: only when stderr is a terminal and the transfer
// is large enough to be worth watching; one line rewritten in place, at most ten times a second,
// and erased when the transfer is done, so the result prints on a clean line (the screen is shared
// with stdout).

const LARGE_BYTES = 4 * 1024 * 1024;
const UNITS = ["B", "KB", "MB", "GB", "TB"];

export interface TransferProgress {
  add(bytes: number): void;
  done(): void;
}

export function transferProgress(label: string, totalBytes: number | undefined, stream: NodeJS.WriteStream = process.stderr): TransferProgress {
  if (!stream.isTTY || (totalBytes !== undefined && totalBytes < LARGE_BYTES)) return { add: () => undefined, done: () => undefined };
  let sent = 0;
  let shownAt = 0;
  const show = () => {
    const share = totalBytes ? ` (${Math.floor((sent / totalBytes) * 100)}%)` : "";
    stream.write(`\r\x1b[2K${label} ${humanBytes(sent)}${totalBytes ? ` of ${humanBytes(totalBytes)}` : ""}${share}`);
  };
  return {
    add(bytes) {
      sent += bytes;
      const now = Date.now();
      if (now - shownAt >= 100) {
        shownAt = now;
        show();
      }
    },
    done() {
      stream.write("\r\x1b[2K");
    },
  };
}

/** 1536 -> "1.5 KB" (binary units, as the plans count). */
export function humanBytes(bytes: number): string {
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < UNITS.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return `${unit === 0 ? value : Math.round(value * 10) / 10} ${UNITS[unit]}`;
}
