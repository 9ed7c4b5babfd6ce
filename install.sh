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
# single-machine Redis); gw's embedded default does not need it. nginx is for the test that walks
# docs/deploy.md (several instances behind a load balancer: it runs its own nginx in the foreground
# on a loopback port); gw itself never needs it. nginx is in /usr/sbin, off a user's PATH.
# chromium (Debian's) and fonts-liberation are for the web console's browser tests
# (test/console.test.ts drives it headless with playwright-core); gw itself never needs them.
engines=(espeak-ng tesseract-ocr ffmpeg redis-server nginx curl jq chromium fonts-liberation)
missing=()
command -v espeak-ng >/dev/null 2>&1 || missing+=(espeak-ng)
command -v tesseract >/dev/null 2>&1 || missing+=(tesseract-ocr)
command -v ffmpeg >/dev/null 2>&1 || missing+=(ffmpeg)
command -v redis-server >/dev/null 2>&1 || missing+=(redis-server)
command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ] || missing+=(nginx)
# curl and jq: the shell steps of docs/deploy.md, which that test runs as written.
command -v curl >/dev/null 2>&1 || missing+=(curl)
command -v jq >/dev/null 2>&1 || missing+=(jq)
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
[ -d /usr/share/fonts/truetype/liberation ] || missing+=(fonts-liberation)
if [ "${#missing[@]}" -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    say "installing OS engines: ${missing[*]}"
    # redis-server and nginx are installed for the tests, which run their own on loopback ports:
    # Debian would also start and enable their system services (Redis on 6379, nginx on port 80).
    # A policy-rc.d that refuses every start keeps them stopped during the install (unless the
    # machine has one already), and the services of packages installed here are disabled after.
    policy=/usr/sbin/policy-rc.d
    made_policy=0
    if [ ! -e "$policy" ]; then printf '#!/bin/sh\nexit 101\n' > "$policy" && chmod +x "$policy" && made_policy=1; fi
    if ! { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null; }; then
      say "WARNING: could not install ${missing[*]} with apt-get; the local engines that need them stay unavailable"
    fi
    if [ "$made_policy" = 1 ]; then rm -f "$policy"; fi
    if [ -d /run/systemd/system ]; then
      for service in redis-server nginx; do
        if [[ " ${missing[*]} " == *" $service "* ]]; then systemctl disable --now "$service" >/dev/null 2>&1 || true; fi
      done
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
