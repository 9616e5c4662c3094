#!/usr/bin/env bash
# make docs: the DocC archives of the library modules, from the release build's modules (no second build):
# swift-symbolgraph-extract reads each module's public symbols, docc converts them with the module's catalog
# (Sources/MODULE/MODULE.docc, where there is one) and fails on any warning, and on any public symbol without a
# doc comment of its own (scripts/undocumented-symbols.py lists them).
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
  python3 scripts/undocumented-symbols.py "$graphs/$module/$module.symbols.json" > "$graphs/$module.undocumented" || {
    sed 's/^/  /' "$graphs/$module.undocumented"
    echo "docs: these $(wc -l < "$graphs/$module.undocumented") public symbols of $module have no doc comment of their own:" \
      "give each a summary line"
    exit 1
  }
  echo "docs: $output/$module.doccarchive, no warnings, every public symbol documented"
done
