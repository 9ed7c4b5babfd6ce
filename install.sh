#!/usr/bin/env bash
# One-command setup from a fresh clone: dependencies, build, local engines, and a runnable `gw`.
# Safe to run again. Exits non-zero when something required fails.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"

say() { printf 'install: %s\n' "$*"; }

# Node >= 20.19
node -e '
  const [major, minor] = process.versions.node.split(".").map(Number);
  if (major < 20 || (major === 20 && minor < 19)) { console.error(`install: Node ${process.versions.node} is too old; gw needs Node >= 20.19`); process.exit(1); }
'

say "installing npm dependencies"
npm ci --no-audit --no-fund --loglevel=error

say "building"
npm run build --silent

# Local engines from the OS (speech, OCR, audio/video). Optional: gw runs without them and
# `gw doctor` reports what is missing. redis-server is for the tests of gw's Redis state (and a
# single-machine Redis); gw's embedded default does not need it.
engines=(espeak-ng tesseract-ocr ffmpeg redis-server)
missing=()
command -v espeak-ng >/dev/null 2>&1 || missing+=(espeak-ng)
command -v tesseract >/dev/null 2>&1 || missing+=(tesseract-ocr)
command -v ffmpeg >/dev/null 2>&1 || missing+=(ffmpeg)
command -v redis-server >/dev/null 2>&1 || missing+=(redis-server)
if [ "${#missing[@]}" -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    say "installing OS engines: ${missing[*]}"
    if ! { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null; }; then
      say "WARNING: could not install ${missing[*]} with apt-get; the local engines that need them stay unavailable"
    fi
  else
    say "NOTE: not installed: ${missing[*]} (run as root on Debian/Ubuntu to install them, or install them yourself: apt-get install ${engines[*]})"
  fi
fi

# Make `gw` runnable: link it onto PATH when npm's global bin is writable.
if npm link --no-audit --no-fund --loglevel=error >/dev/null 2>&1 && command -v gw >/dev/null 2>&1; then
  say "gw is on PATH: $(command -v gw)"
else
  say "NOTE: could not link gw globally; run it as $(pwd)/bin/run.js or add $(pwd)/bin to PATH"
fi
say "done — next: gw serve   (or: gw doctor)"
