#!/usr/bin/env bash
# Builds the installable Blender add-on zip: blender/io_scene_parkan plus this
# platform's msh2gltf and gltf2msh in io_scene_parkan/bin/ (stripped when
# `strip` is there). Install it in Blender with Edit > Preferences > Add-ons >
# Install... (Blender 4.2+: Install from Disk).
#
#   scripts/package_addon.sh [--bin-dir DIR] [--no-bin] [OUT.zip]
#
#   --bin-dir DIR  take the binaries from DIR instead of building them
#                  (default: cargo build --release --bins, target/release)
#   --no-bin       no binaries in the zip (the add-on then uses PATH or the
#                  folder set in its preferences)
#   OUT.zip        default: target/io_scene_parkan-<version>-<os>-<arch>.zip
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bin_dir='' with_bin=1 out=''
while (($#)); do
  case $1 in
    --bin-dir) bin_dir=$(cd "$2" && pwd); shift ;;
    --no-bin) with_bin=0 ;;
    -h|--help) sed -n '2,14p' "$0"; exit 0 ;;
    -*) echo "package_addon.sh: unknown option $1" >&2; exit 2 ;;
    *) out=$1 ;;
  esac
  shift
done
version=$(sed -n 's/^version = "\(.*\)"/\1/p' "$root/Cargo.toml" | head -1)
os=$(uname -s | tr '[:upper:]' '[:lower:]') arch=$(uname -m)
[[ -n $out ]] || out=$root/target/io_scene_parkan-$version-$os-$arch.zip
case $out in /*) ;; *) out=$PWD/$out ;; esac
exe=''
[[ $os == mingw* || $os == msys* || $os == cygwin* ]] && exe=.exe
if ((with_bin)) && [[ -z $bin_dir ]]; then
  (cd "$root" && cargo build --release --bins)
  bin_dir=$root/target/release
fi

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
pkg=$stage/io_scene_parkan
mkdir -p "$pkg"
cp "$root"/blender/io_scene_parkan/*.py "$pkg/"
if ((with_bin)); then
  mkdir -p "$pkg/bin"
  for b in msh2gltf gltf2msh; do
    [[ -x $bin_dir/$b$exe ]] || { echo "package_addon.sh: $bin_dir/$b$exe not found" >&2; exit 1; }
    cp "$bin_dir/$b$exe" "$pkg/bin/"
    if command -v strip >/dev/null; then strip "$pkg/bin/$b$exe" 2>/dev/null || true; fi
    chmod 755 "$pkg/bin/$b$exe"
  done
fi
mkdir -p "$(dirname "$out")"
rm -f "$out"
(cd "$stage" && python3 - "$out" <<'PY'
import os, sys, zipfile
with zipfile.ZipFile(sys.argv[1], "w", zipfile.ZIP_DEFLATED) as z:
    for d, _dirs, files in sorted(os.walk("io_scene_parkan")):
        for f in sorted(files):
            p = os.path.join(d, f)
            z.write(p, p)  # keeps the unix mode (Blender's unzip drops it; the add-on restores +x)
PY
)
echo "package_addon.sh: wrote $out ($(du -h "$out" | cut -f1))"
