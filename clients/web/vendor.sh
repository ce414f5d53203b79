#!/usr/bin/env bash
# Refresh vendor/ from the npm registry: the exact versions of package.json (and the integrity
# hashes of package-lock.json), only the ES module files the pages load, and each licence.
# Run from anywhere: clients/web/vendor.sh. node_modules lives in a temporary folder, never here.
# After a version bump: edit package.json, run this, then the tests (tests/web/).
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
cp "$HERE/package.json" "$WORK/"
[ -f "$HERE/package-lock.json" ] && cp "$HERE/package-lock.json" "$WORK/"
(cd "$WORK" && npm install --ignore-scripts --no-audit --no-fund --loglevel=error)
# The lock keeps versions and integrity hashes; the download addresses are npm's business.
node -e '
const fs = require("fs");
const lock = JSON.parse(fs.readFileSync(process.argv[1], "utf-8"));
for (const p of Object.values(lock.packages)) delete p.resolved;
fs.writeFileSync(process.argv[2], JSON.stringify(lock, null, 2) + "\n");
' "$WORK/package-lock.json" "$HERE/package-lock.json"
NM="$WORK/node_modules"

rm -rf "$HERE/vendor"
mkdir -p "$HERE/vendor/msgpack" "$HERE/vendor/noble-hashes" "$HERE/vendor/immutable-json-patch"

# @msgpack/msgpack: its ES module build (dist.esm, .mjs files importing each other), no maps.
(cd "$NM/@msgpack/msgpack/dist.esm" && find . -name '*.mjs' | while read -r f; do
  mkdir -p "$HERE/vendor/msgpack/$(dirname "$f")" && cp "$f" "$HERE/vendor/msgpack/$f"
done)
cp "$NM/@msgpack/msgpack/LICENSE" "$HERE/vendor/msgpack/LICENSE"

# @noble/hashes: BLAKE2b and the files it imports.
for f in blake2.js _blake.js _md.js _u64.js utils.js; do
  cp "$NM/@noble/hashes/$f" "$HERE/vendor/noble-hashes/$f"
done
cp "$NM/@noble/hashes/LICENSE" "$HERE/vendor/noble-hashes/LICENSE"

# immutable-json-patch: its ES module build.
cp "$NM/immutable-json-patch/lib/esm/"*.js "$HERE/vendor/immutable-json-patch/"
cp "$NM/immutable-json-patch/LICENSE.md" "$HERE/vendor/immutable-json-patch/LICENSE"

# Strip the source-map comments: the maps are not vendored.
find "$HERE/vendor" \( -name '*.js' -o -name '*.mjs' \) -exec sed -i '/^\/\/# sourceMappingURL=/d; s#//\# sourceMappingURL=.*$##' {} +

node -e '
const lock = require(process.argv[1]);
for (const [path, p] of Object.entries(lock.packages)) if (path) console.log(path.replace("node_modules/", ""), p.version, p.license || "");
' "$HERE/package-lock.json" > "$HERE/vendor/VERSIONS.txt"
echo "vendor/ refreshed:" && cat "$HERE/vendor/VERSIONS.txt"
