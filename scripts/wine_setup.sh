#!/usr/bin/env bash
# Prepares the Wine prefix the Windows build is tested in (scripts/wine_smoke.sh,
# scripts/build_windows.sh --test): target/windows/wine/prefix, with a test-only
# bcryptprimitives.dll (scripts/wine/bcryptprimitives.c: ProcessPrng forwarded to
# BCryptGenRandom; Wine 8.0 lacks the DLL, Windows 10/11 have it; never shipped).
# Installs wine/wine64 and mingw-w64 from Debian's packages when missing.
#
#   eval "$(scripts/wine_setup.sh)"   # exports WINEPREFIX, WINEDLLOVERRIDES, WINEDEBUG
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
need=()
command -v wine >/dev/null || need+=(wine wine64)
command -v x86_64-w64-mingw32-gcc-posix >/dev/null || need+=(gcc-mingw-w64-x86-64-posix)
if ((${#need[@]})); then
  { apt-get install -y "${need[@]}" || { apt-get update && apt-get install -y "${need[@]}"; }; } >/dev/null 2>&1 \
    || { echo "wine_setup.sh: cannot install ${need[*]}" >&2; exit 1; }
fi
w=$root/target/windows/wine
mkdir -p "$w"
dll=$w/bcryptprimitives.dll
if [[ ! -f $dll || $root/scripts/wine/bcryptprimitives.c -nt $dll ]]; then
  x86_64-w64-mingw32-gcc-posix -shared -O2 -o "$dll" \
    "$root/scripts/wine/bcryptprimitives.c" "$root/scripts/wine/bcryptprimitives.def" -lbcrypt >&2
fi
export WINEPREFIX=$w/prefix WINEDEBUG=-all WINEDLLOVERRIDES="bcryptprimitives=n;mscoree,mshtml="
if [[ ! -f $WINEPREFIX/system.reg ]]; then
  echo "wine_setup.sh: creating the Wine prefix $WINEPREFIX" >&2
  wineboot -i >/dev/null 2>&1 || true
  wineserver -w || true
fi
cp -u "$dll" "$WINEPREFIX/drive_c/windows/system32/bcryptprimitives.dll"
printf 'export WINEPREFIX=%q WINEDEBUG=%q WINEDLLOVERRIDES=%q\n' "$WINEPREFIX" "$WINEDEBUG" "$WINEDLLOVERRIDES"
