#!/usr/bin/env bash
# Builds the Blender add-on zip a modder installs without Rust: the add-on
# (blender/io_scene_parkan), its Blender 4.2+ extension manifest, and one
# platform's msh2gltf and gltf2msh in io_scene_parkan/bin/. The same zip is
#   - a Blender 4.2+ extension (Edit > Preferences > Get Extensions >
#     ▾ > Install from Disk...; `platforms` in its manifest = the binaries'),
#   - a legacy add-on for Blender 3.4..4.1 (Preferences > Add-ons > Install...).
#
#   scripts/package_addon.sh [--bin-dir DIR [--platform P]] [--no-bin] [OUT.zip]
#
#   --bin-dir DIR  take the binaries from DIR instead of building them
#                  (default: cargo build --release --bins, target/release;
#                  with --platform windows-x64: scripts/build_windows.sh,
#                  the cross-build from Debian's packages)
#   --platform P   Blender's name of the platform the binaries are for:
#                  linux-x64, windows-x64, macos-arm64, macos-x64, ...
#                  (default: this machine's)
#   --no-bin       no binaries: a platform-independent zip (the add-on then
#                  uses PATH or the folder set in its preferences)
#   OUT.zip        default: target/io_scene_parkan-<version>-<platform>.zip
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bin_dir='' with_bin=1 out='' platform=''
while (($#)); do
  case $1 in
    --bin-dir) bin_dir=$(cd "$2" && pwd); shift ;;
    --platform) platform=$2; shift ;;
    --no-bin) with_bin=0 ;;
    -h|--help) sed -n '2,23p' "$0"; exit 0 ;;
    -*) echo "package_addon.sh: unknown option $1" >&2; exit 2 ;;
    *) out=$1 ;;
  esac
  shift
done
version=$(sed -n 's/^version = "\(.*\)"/\1/p' "$root/Cargo.toml" | head -1)
if [[ -z $platform ]]; then
  case $(uname -s) in
    Linux) os=linux ;; Darwin) os=macos ;; MINGW*|MSYS*|CYGWIN*) os=windows ;;
    *) os=$(uname -s | tr '[:upper:]' '[:lower:]') ;;
  esac
  case $(uname -m) in
    x86_64|amd64) arch=x64 ;; aarch64|arm64) arch=arm64 ;; *) arch=$(uname -m) ;;
  esac
  platform=$os-$arch
fi
((with_bin)) || platform=any
[[ -n $out ]] || out=$root/target/io_scene_parkan-$version-$platform.zip
case $out in /*) ;; *) out=$PWD/$out ;; esac
exe=''
[[ $platform == windows-* ]] && exe=.exe
if ((with_bin)) && [[ -z $bin_dir ]]; then
  if [[ $platform == windows-x64 && $(uname -s) == Linux ]]; then
    # The cross-build checks each .exe (size, system DLLs only); its last line is the folder.
    bin_dir=$("$root/scripts/build_windows.sh" | tail -n1)
  else
    (cd "$root" && cargo build --release --bins)
    bin_dir=$root/target/release
  fi
fi

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
pkg=$stage/io_scene_parkan
mkdir -p "$pkg"
cp "$root"/blender/io_scene_parkan/*.py "$pkg/"
# The manifest: this version, and the platform of the bundled binaries.
sed "s/^version = \".*\"/version = \"$version\"/" \
  "$root/blender/io_scene_parkan/blender_manifest.toml" > "$pkg/blender_manifest.toml"
if ((with_bin)); then
  sed -i "s/^license = .*/&\nplatforms = [\"$platform\"]/" "$pkg/blender_manifest.toml"
  mkdir -p "$pkg/bin"
  for b in msh2gltf gltf2msh; do
    [[ -x $bin_dir/$b$exe ]] || { echo "package_addon.sh: $bin_dir/$b$exe not found" >&2; exit 1; }
    cp "$bin_dir/$b$exe" "$pkg/bin/"
    if [[ -z $exe ]] && command -v strip >/dev/null; then strip "$pkg/bin/$b$exe" 2>/dev/null || true; fi
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
echo "package_addon.sh: wrote $out ($(du -h "$out" | cut -f1); platform $platform)"
