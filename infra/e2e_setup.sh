#!/usr/bin/env bash
# Set-up for the inspector's browser test (tests/e2e): Debian chromium, fonts for Chinese text,
# and playwright-core from tests/e2e/package-lock.json. Idempotent: installs only what is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
missing=()
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
fc-list 2>/dev/null | grep -qi "wqy\|noto sans cjk" || missing+=(fonts-wqy-zenhei)
command -v node >/dev/null 2>&1 || missing+=(nodejs)
command -v npm >/dev/null 2>&1 || missing+=(npm)
if ((${#missing[@]})); then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}"
fi
lock=tests/e2e/package-lock.json
stamp=tests/e2e/node_modules/.installed
if [ ! -f "$stamp" ] || [ "$lock" -nt "$stamp" ]; then
  (cd tests/e2e && npm ci --no-audit --no-fund --loglevel=error)
  touch "$stamp"
fi
