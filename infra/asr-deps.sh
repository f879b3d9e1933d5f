#!/usr/bin/env bash
# System packages the ASR path's tests need: espeak-ng generates the test audio (English
# and Mandarin pinyin voices). The speech model itself comes from PyPI (pyproject.toml).
# Idempotent; run as root (CI and the dev machines are root) before the test suite.
set -euo pipefail
if command -v espeak-ng >/dev/null 2>&1; then
    exit 0
fi
apt-get update -qq
apt-get install -y -qq espeak-ng
