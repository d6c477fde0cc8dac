#!/usr/bin/env bash
# Renders docs/blender-addon.png, the README's picture of the Blender add-on:
# ../shared/corpus/units.rlb:R_S_08.msh imported through File > Import >
# Parkan model in headless Blender (Workbench, 480x320, mid-animation), by
# the same script the add-on test runs (tests/blender/addon_test.py).
#
#   scripts/addon_picture.sh [OUT.png]     (BLENDER=/path/to/blender to pick one)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$root/docs/blender-addon.png}
case $out in /*) ;; *) out=$PWD/$out ;; esac
corpus=$root/../shared/corpus
[[ -f $corpus/units.rlb ]] || { echo "addon_picture.sh: $corpus/units.rlb not found" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$root/scripts/package_addon.sh" "$tmp/addon.zip" >/dev/null
mkdir -p "$(dirname "$out")"
BLENDER_USER_SCRIPTS=$tmp/scripts BLENDER_USER_CONFIG=$tmp/config \
  "${BLENDER:-blender}" -b --factory-startup -noaudio --python "$root/tests/blender/addon_test.py" -- \
  "$tmp/addon.zip" "$corpus/units.rlb" R_S_08.msh "$tmp/work" --render "$out" >"$tmp/log" 2>&1 || true
report=$(grep -o 'ADDON_TEST {.*' "$tmp/log" | cut -c12-) || { tail -20 "$tmp/log" >&2; exit 1; }
python3 -c 'import json, sys; r = json.loads(sys.argv[1]); sys.exit("errors: %s" % r["errors"] if r["errors"] else 0)' "$report"
echo "addon_picture.sh: wrote $out ($(du -h "$out" | cut -f1))"
