#!/usr/bin/env bash
# Regenerates the documentation images from their text sources: docs/images/*.dot -> *.svg next to them (Graphviz).
# The SVGs are committed, so neither the build nor a reader needs Graphviz; run this after editing a .dot file.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v dot >/dev/null; then
    echo "render-docs: Graphviz 'dot' is missing (Debian: apt-get install graphviz)" >&2
    exit 1
fi
for source in docs/images/*.dot; do
    dot -Tsvg "$source" -o "${source%.dot}.svg"
    echo "render-docs: ${source%.dot}.svg"
done
