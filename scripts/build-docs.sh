#!/usr/bin/env bash
# make docs: the DocC archives of the library modules, from the release build's modules (no second build):
# swift-symbolgraph-extract reads each module's public symbols, docc converts them with the module's catalog
# (Sources/MODULE/MODULE.docc, where there is one) and fails on any warning. Then it says, per module, how many
# public symbols still have no doc comment of their own (scripts/undocumented-symbols.py lists them).
# usage: scripts/build-docs.sh BUILD_DIR OUTPUT_DIR MODULE...
set -euo pipefail
build=$1 output=$2
shift 2
graphs=$(mktemp -d)
trap 'rm -rf "$graphs"' EXIT
# The C modules the Swift modules import: this package's and its dependencies' module maps.
flags=()
for map in "$build"/*.build/module.modulemap Sources/*/module.modulemap Sources/*/include/module.modulemap \
           $(find .build/checkouts -path '*/include/module.modulemap' 2>/dev/null); do
  [ -f "$map" ] && flags+=(-Xcc "-fmodule-map-file=$PWD/${map#$PWD/}")
done
for folder in Sources/*/include $(find .build/checkouts -type d -path '*/Sources/*/include' 2>/dev/null); do
  flags+=(-I "$PWD/$folder")
done
mkdir -p "$output"
for module in "$@"; do
  mkdir -p "$graphs/$module"
  swift-symbolgraph-extract -module-name "$module" -target "$(uname -m)-unknown-linux-gnu" -I "$build/Modules" \
    "${flags[@]}" -minimum-access-level public -output-dir "$graphs/$module"
  catalog=()
  [ -d "Sources/$module/$module.docc" ] && catalog=("Sources/$module/$module.docc")
  rm -rf "$output/$module.doccarchive"
  docc convert "${catalog[@]}" --additional-symbol-graph-dir "$graphs/$module" --output-path "$output/$module.doccarchive" \
    --fallback-display-name "$module" --fallback-bundle-identifier "org.jackaudiosession.$module" --warnings-as-errors \
    > "$graphs/$module.log" 2>&1 || { cat "$graphs/$module.log"; echo "docs: DocC refused $module"; exit 1; }
  undocumented=$(python3 scripts/undocumented-symbols.py "$graphs/$module/$module.symbols.json" | wc -l || true)
  echo "docs: $output/$module.doccarchive, no warnings; $undocumented public symbols without a doc comment of their own"
done
