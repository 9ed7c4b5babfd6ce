// Progress of an upload or download on stderr: only when stderr is a terminal and the transfer
// is large enough to be worth watching; one line rewritten in place, at most ten times a second,
// and erased when the transfer is done, so the result prints on a clean line (the screen is shared
// with stdout).
import { roundedSize } from "../text/byte-sizes.js";

const LARGE_BYTES = 4 * 1024 * 1024;

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

/** 1536 -> "1.5 KB": a measured size (the commands that print sizes import it from here). */
export const humanBytes = roundedSize;
