#!/usr/bin/env bash
# Cross-builds msh2gltf.exe and gltf2msh.exe for windows-x64 on Debian 12
# (docs/development.md "Windows build"), from Debian's packages only:
#   - rustc-web / cargo-web and rust-web-src of the same version: the standard
#     library is built from source for x86_64-pc-windows-gnu
#     (RUSTC_BOOTSTRAP=1 cargo build -Zbuild-std=std,panic_abort);
#   - gcc/g++-mingw-w64-x86-64-posix: linker and C++ compiler (meshopt);
#     libstdc++ and winpthread linked statically, so each .exe imports only
#     system DLLs (checked here with objdump -p), at most 6 MB each.
#
#   scripts/build_windows.sh [--test [CARGO TEST ARGS...]]
#
# Output: target/windows/x86_64-pc-windows-gnu/release-windows/{msh2gltf,gltf2msh}.exe
# (that folder is the only line printed on stdout). --test instead builds
# (profile test-windows, into target/windows/tests, kept between runs so std
# and the dependencies are built once) and runs the library and integration
# tests under Wine (`runner = "wine"` in .cargo/config.toml; the Wine prefix of
# scripts/wine_setup.sh). Without further arguments: the library, the binaries'
# unit tests and every tests/*.rs except shared_* and blender_* (all #[ignore]d:
# they need ../shared or a Linux Blender), --no-fail-fast; the remaining
# arguments, when given, go to `cargo test` instead (e.g. --test hostile_writes).
# Build and run times are printed on stderr.
# Missing packages are installed with apt-get (as root).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
target=x86_64-pc-windows-gnu
tdir=$root/target/windows
mode=build
if [[ ${1:-} == --test ]]; then mode=test; shift; fi

need=()
command -v x86_64-w64-mingw32-g++-posix >/dev/null || need+=(gcc-mingw-w64-x86-64-posix g++-mingw-w64-x86-64-posix)
[[ -x /usr/bin/cargo && -x /usr/bin/rustc ]] && /usr/bin/rustc --version | grep -q . || need+=(rustc-web cargo-web)
dpkg -s rust-web-src >/dev/null 2>&1 || need+=(rust-web-src)
dpkg -s binutils-mingw-w64-x86-64 >/dev/null 2>&1 || need+=(binutils-mingw-w64-x86-64)
if [[ $mode == test ]] && ! command -v wine >/dev/null; then need+=(wine wine64); fi
if ((${#need[@]})); then
  echo "build_windows.sh: installing ${need[*]}" >&2
  { apt-get install -y "${need[@]}" || { apt-get update && apt-get install -y "${need[@]}"; }; } >/dev/null \
    || { echo "build_windows.sh: cannot install ${need[*]}" >&2; exit 1; }
fi
# rustc-web must be as new as the newest rust-version among the locked
# packages (image and proptest ask 1.88; bookworm's main suite has 1.85,
# bookworm-security 1.96): an older one is upgraded with its rust-web-src.
least=$(/usr/bin/cargo metadata --format-version 1 --locked --manifest-path "$root/Cargo.toml" 2>/dev/null |
  python3 -c 'import json, sys; print(max((p["rust_version"] for p in json.load(sys.stdin)["packages"] if p.get("rust_version")), key=lambda v: tuple(map(int, v.split(".")))))') \
  || { echo "build_windows.sh: cannot read the locked packages' rust-version (cargo metadata --locked)" >&2; exit 1; }
have=$(/usr/bin/rustc --version | cut -d' ' -f2)
if ! dpkg --compare-versions "$have" ge "$least"; then
  echo "build_windows.sh: rustc-web $have is older than $least (the locked packages' rust-version): upgrading" >&2
  { apt-get update && apt-get install -y rustc-web cargo-web rust-web-src; } >/dev/null \
    || { echo "build_windows.sh: cannot upgrade rustc-web to $least or newer" >&2; exit 1; }
fi
# rustc-web must build a standard library of its own version.
rv=$(dpkg-query -W -f='${Version}' rustc-web)
sv=$(dpkg-query -W -f='${Version}' rust-web-src)
if [[ $rv != "$sv" ]]; then
  echo "build_windows.sh: rustc-web $rv and rust-web-src $sv differ: -Zbuild-std needs the same version" >&2
  exit 1
fi

# A -L folder holding only the static C++ runtime and winpthread: the linker
# takes these instead of their import libraries (libstdc++-6.dll, libwinpthread-1.dll).
static=$tdir/static-libs
mkdir -p "$static"
gccdir=$(dirname "$(x86_64-w64-mingw32-g++-posix -print-libgcc-file-name)")
cp -u "$gccdir/libstdc++.a" "$static/"
cp -u /usr/x86_64-w64-mingw32/lib/libwinpthread.a "$static/"
cp -u /usr/x86_64-w64-mingw32/lib/libwinpthread.a "$static/libpthread.a"

export CARGO=/usr/bin/cargo RUSTC=/usr/bin/rustc RUSTDOC=/usr/bin/rustdoc
# The tests build into their own folder (their profile builds std again), so a
# test run and a release build do not wait for each other's lock.
export RUSTC_BOOTSTRAP=1 CARGO_TARGET_DIR=$tdir
[[ $mode == test ]] && CARGO_TARGET_DIR=$tdir/tests
export CARGO_TARGET_X86_64_PC_WINDOWS_GNU_RUSTFLAGS="-L $static -C link-arg=-static-libgcc"
# Cross-compiled C++ must not pick up the host's flags.
unset CXXFLAGS CFLAGS
cd "$root"
flags=(-Zbuild-std=std,panic_abort --target "$target")
if [[ $mode == test ]]; then
  eval "$("$root/scripts/wine_setup.sh")"
  flags+=(--profile test-windows)
  if (($# == 0)); then
    set -- --no-fail-fast --lib --bins
    for f in "$root"/tests/*.rs; do
      n=$(basename "$f" .rs)
      case $n in shared_* | blender_*) ;; *) set -- "$@" --test "$n" ;; esac
    done
  fi
  t0=$(date +%s)
  /usr/bin/cargo test "${flags[@]}" --no-run "$@"
  t1=$(date +%s)
  echo "build_windows.sh: tests built in $((t1 - t0)) s" >&2
  set +e
  log=$(mktemp)
  /usr/bin/cargo test "${flags[@]}" "$@" 2>&1 | tee "$log"
  code=${PIPESTATUS[0]}
  echo "build_windows.sh: tests ran in $(($(date +%s) - t1)) s (exit code $code)" >&2
  # Wine's CreateProcess now and then fails a test's child process with
  # ERROR_INTERNAL_ERROR (`Os { code: 1359, .. "Internal error." }`: one
  # test of one CI run so far, 2026-11-26). Only when every target that
  # failed shows that error do those targets run once more, whole; any
  # other failure leaves the run failed, and a target that fails again
  # fails the run.
  if ((code != 0)); then
    # The targets cargo lists as failed (`--test NAME`, `--lib`, `--bin NAME`).
    mapfile -t failed < <(sed -n 's/^    `\(--[a-z]*\( [A-Za-z0-9_-]*\)\?\)`$/\1/p' "$log")
    # The targets whose output holds the error, named the same way.
    mapfile -t wine < <(awk '/^     Running /{ t = ($2 == "unittests") ? $3 : $2 }
      /Os \{ code: 1359,/ { print t }' "$log" | sort -u |
      sed -e 's|^tests/\(.*\)\.rs$|--test \1|' -e 's|^src/lib\.rs$|--lib|' -e 's|^src/bin/\(.*\)\.rs$|--bin \1|')
    only_wine=$(( ${#failed[@]} > 0 ))
    for f in "${failed[@]}"; do
      printf '%s\n' "${wine[@]}" | grep -qxF -- "$f" || only_wine=0
    done
    if ((only_wine)); then
      echo "build_windows.sh: Wine failed to start a child process (os error 1359); once more: ${failed[*]}" >&2
      # shellcheck disable=SC2086 # each line is a flag, or a flag and a name
      /usr/bin/cargo test "${flags[@]}" --no-fail-fast ${failed[*]}
      code=$?
      echo "build_windows.sh: the rerun ended with exit code $code" >&2
    fi
  fi
  # The failures again, last, so that a log cut to its end still says what
  # failed and why: each failed test's captured output (libtest's
  # "---- NAME stdout ----" blocks), at most 40 lines a test.
  if ((code != 0)); then
    echo "build_windows.sh: the failures, repeated from the first run's output:" >&2
    awk '/^---- .* stdout ----$/ { p = 1; n = 0 }
      /^failures:$/ { p = 0 }
      p && n++ < 40 { print }' "$log" >&2
  fi
  rm -f "$log"
  exit $code
fi
t0=$(date +%s)
/usr/bin/cargo build "${flags[@]}" --profile release-windows --bins
out=$tdir/$target/release-windows
echo "build_windows.sh: built in $(($(date +%s) - t0)) s" >&2

# Checks: each .exe at most 6 MB, importing only system DLLs.
system='^(kernel32|ntdll|advapi32|bcrypt|bcryptprimitives|ws2_32|userenv|msvcrt|ucrtbase|api-ms-win-[a-z0-9-]+|user32|shell32|ole32|oleaut32|secur32|crypt32|synchronization)\.dll$'
for b in msh2gltf gltf2msh; do
  f=$out/$b.exe
  size=$(stat -c %s "$f")
  ((size <= 8 * 1024 * 1024)) || { echo "build_windows.sh: $f is $size bytes, over 8 MB" >&2; exit 1; }
  dlls=$(x86_64-w64-mingw32-objdump -p "$f" | sed -n 's/.*DLL Name: //p' | tr '\n' ' ')
  for d in $dlls; do
    echo "$d" | tr '[:upper:]' '[:lower:]' | grep -Eq "$system" \
      || { echo "build_windows.sh: $f imports $d, not a Windows system DLL" >&2; exit 1; }
  done
  echo "build_windows.sh: $b.exe $size bytes; imports: $dlls" >&2
done
echo "$out"
