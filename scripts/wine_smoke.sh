#!/usr/bin/env bash
# Smoke test of the Windows build under Wine (issue 27), against the Linux build:
# the README's command examples, `--base` round trips (byte-identical), `--in-place`
# authoring into a copy of the demo libraries (with a rename failure injected at
# every position, with and without hard links), `--into` an archive in place,
# and a game under `C:\Program Files (x86)\Parkan\Моды` (spaces, parentheses,
# Cyrillic). The Windows run gets backslash paths; outputs must equal the Linux
# run's (GLBs up to path separators in extras.msh.source: scripts/wine/glbtool.py).
#
#   scripts/wine_smoke.sh WIN_BIN_DIR [LINUX_BIN_DIR]   (default: target/release)
#
# Exit code 0 when every check passed, 1 otherwise.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
win=$(cd "${1:?usage: scripts/wine_smoke.sh WIN_BIN_DIR [LINUX_BIN_DIR]}" && pwd)
lin=$(cd "${2:-$root/target/release}" && pwd)
for f in "$win/msh2gltf.exe" "$win/gltf2msh.exe" "$lin/msh2gltf" "$lin/gltf2msh"; do
  [[ -f $f ]] || { echo "wine_smoke.sh: $f not found" >&2; exit 2; }
done
eval "$("$root/scripts/wine_setup.sh")"
tool=$root/scripts/wine/glbtool.py
tmp=$(mktemp -d)
# The game under C:\Program Files (x86)\Parkan\Моды in the test prefix.
pf=$WINEPREFIX/drive_c/Program\ Files\ \(x86\)/Parkan/Моды
if [[ ${KEEP:-} == 1 ]]; then echo "(files kept in $tmp)"; else trap 'rm -rf "$tmp" "$pf"' EXIT; fi
passed=0 failed=0
ok() { passed=$((passed + 1)); echo "ok    $1"; }
bad() { failed=$((failed + 1)); echo "FAIL  $1"; }
check() { local what=$1; shift; if "$@"; then ok "$what"; else bad "$what"; fi; }
# W TOOL ARGS...: the Windows tool in win/ (exit code kept; output in $tmp/last.out).
W() { local t=$1; shift; (cd "$tmp/win" && wine "$win/$t.exe" "$@") >"$tmp/last.out" 2>&1; }
L() { local t=$1; shift; (cd "$tmp/lin" && "$lin/$t" "$@") >"$tmp/last.out" 2>&1; }
# both NAME TOOL ARGS...: the same command in lin/ and win/ (ARGS with '/'; the
# Windows run gets them with '\'); each must exit 0.
both() {
  local name=$1 t=$2; shift 2
  local wargs=() a
  for a in "$@"; do wargs+=("${a//\//\\}"); done
  L "$t" "$@" || { echo "      linux $t $*:"; sed 's/^/      | /' "$tmp/last.out" | head -5; bad "$name"; return 1; }
  cp "$tmp/last.out" "$tmp/$name.lin.out"
  W "$t" "${wargs[@]}" || { echo "      wine $t ${wargs[*]}:"; sed 's/^/      | /' "$tmp/last.out" | head -5; bad "$name"; return 1; }
  cp "$tmp/last.out" "$tmp/$name.win.out"
  return 0
}
# same_tree DIR: every file under lin/DIR equals win/DIR's (GLBs normalised).
same_tree() {
  local d=$1 f n=0
  [[ -d $tmp/lin/$d || -f $tmp/lin/$d ]] || return 1
  if [[ -f $tmp/lin/$d ]]; then python3 "$tool" same "$tmp/lin/$d" "$tmp/win/$d"; return; fi
  [[ $( cd "$tmp/lin/$d" && find . -type f ! -name '*.mshgltf-lock' | sort) == $( cd "$tmp/win/$d" && find . -type f ! -name '*.mshgltf-lock' | sort) ]] \
    || { echo "      $d: different file lists"; return 1; }
  while IFS= read -r f; do
    case $f in *.json) continue ;; esac  # reports: timings differ
    python3 "$tool" same "$tmp/lin/$d/$f" "$tmp/win/$d/$f" || return 1
    n=$((n + 1))
  done < <(cd "$tmp/lin/$d" && find . -type f ! -name '*.mshgltf-lock' | sort)
  ((n > 0))
}

for side in lin win; do
  mkdir -p "$tmp/$side/out"
  cp -r "$root/samples" "$tmp/$side/samples"
done

echo "== the README's examples"
both m_rotor msh2gltf samples/anim_rotor.msh out/rotor.glb && check "one bare model" same_tree out/rotor.glb
both m_tower msh2gltf samples/demo/demo.rlb:TOWER.msh out/tower.glb && check "one archive entry, textured" same_tree out/tower.glb
both m_demo msh2gltf samples/demo/demo.rlb out/demo && check "every model of an archive" same_tree out/demo
both m_all msh2gltf samples out/all --jobs 2 --report out/report.json && check "a whole folder (--report written)" same_tree out/all
both m_gltf msh2gltf samples/anim_rotor.msh out/rotor.gltf && check ".gltf + .bin" same_tree out/rotor.bin
both m_list msh2gltf --list samples/demo/demo.rlb \
  && check "--list (the path as given: backslashes made slashes)" \
    cmp -s "$tmp/m_list.lin.out" <(sed 's|\\\\|/|g' "$tmp/m_list.win.out")

echo "== --base round trips (byte-identical to the base) and authoring"
both g_rotor gltf2msh out/rotor.glb --base samples/anim_rotor.msh \
  && check "rotor --base: byte-identical, as on Linux" cmp -s "$tmp/win/out/rotor.msh" "$root/samples/anim_rotor.msh" \
  && check "rotor --base: same as Linux" same_tree out/rotor.msh
both g_tower gltf2msh out/tower.glb --base samples/demo/demo.rlb:TOWER.msh -o out/demo_new.rlb \
  && check "archive entry --base: byte-identical archive" cmp -s "$tmp/win/out/demo_new.rlb" "$root/samples/demo/demo.rlb"
both g_lod gltf2msh out/all/lod_tower.glb --base samples/lod_tower.msh -o out/lod.msh \
  && check "lod_tower --base: byte-identical" cmp -s "$tmp/win/out/lod.msh" "$root/samples/lod_tower.msh"
both g_new gltf2msh out/rotor.glb -o out/NEW.msh && check "a new model (.msh and .wea)" same_tree out/NEW.wea \
  && check "a new model: same .msh" same_tree out/NEW.msh

echo "== in place: --game-dir --in-place into a copy of the demo libraries, --into an archive"
for side in lin win; do
  cp -r "$root/samples/demo" "$tmp/$side/game"
  python3 "$tool" rename "$tmp/$side/out/tower.glb" "$tmp/$side/out/mine.glb" MY
done
snap() { (cd "$tmp/win/game" && find . -type f ! -name '*.mshgltf-lock' -exec cksum {} + | sort); }
before=$(snap)
for nolinks in 0 1; do
  for k in 0 1 2 3; do
    MSHGLTF_TEST_FAIL_RENAME_AT=$k MSHGLTF_TEST_NO_HARD_LINKS=$nolinks W gltf2msh out\\mine.glb -o out\\MINE.msh --game-dir game --in-place
    code=$?
    check "rename failure at $k (hard links off: $nolinks): exit 1, every game file old, nothing new" \
      eval '[[ $code == 1 && $(snap) == "$before" && ! -e $tmp/win/out/MINE.msh ]] && grep -q "nothing was changed" "$tmp/last.out"'
  done
done
both g_inplace gltf2msh out/mine.glb -o out/MINE.msh --game-dir game --in-place \
  && check "--in-place: the libraries gain the same entries" same_tree game \
  && check "--in-place: same model" same_tree out/MINE.msh
both g_into gltf2msh out/rotor.glb --into game/demo.rlb --name ROTOR2 --force \
  && check "--into the archive itself (--force)" same_tree game/demo.rlb
both g_base_inplace gltf2msh out/tower.glb --base game/demo.rlb:TOWER.msh --in-place \
  && check "--base ARCHIVE:ENTRY --in-place (unedited: the archive unchanged)" same_tree game/demo.rlb

echo "== a game under C:\\Program Files (x86)\\Parkan\\Моды"
mkdir -p "$pf"
cp -r "$root/samples/demo/." "$pf/"
g='C:\Program Files (x86)\Parkan\Моды'
W msh2gltf "$g\\demo.rlb:TOWER.msh" "$g\\out dir\\tower.glb" \
  && check "export from and into paths with spaces and Cyrillic" \
    python3 "$tool" same "$pf/out dir/tower.glb" "$tmp/lin/out/tower.glb" --strip "$g\\" --strip samples/demo/ \
  || bad "export from and into paths with spaces and Cyrillic: $(tail -n2 "$tmp/last.out")"
W gltf2msh "$g\\out dir\\tower.glb" --base "$g\\demo.rlb:TOWER.msh" -o "$g\\out dir\\demo_new.rlb" \
  && check "--base round trip there: byte-identical" cmp -s "$pf/out dir/demo_new.rlb" "$root/samples/demo/demo.rlb" \
  || bad "--base round trip there: $(tail -n2 "$tmp/last.out")"
W gltf2msh out\\mine.glb -o "$g\\out dir\\MINE.msh" --game-dir "$g" --in-place \
  && check "--in-place into the libraries there" cmp -s "$pf/Material.lib" "$tmp/lin/game/Material.lib" \
  || bad "--in-place there: $(tail -n2 "$tmp/last.out")"
# An absolute Windows path of a missing file (a drive letter is no archive:
# source::parse_input) is named as given, without \\?\.
W msh2gltf "$g\\nowhere.msh" out\\x.glb
code=$?
check "a missing input: exit 1 or 2, the path shown without \\\\?\\" \
  eval '[[ $code != 0 ]] && grep -qF "Моды\\nowhere.msh" "$tmp/last.out" && ! grep -qF "\\\\?\\" "$tmp/last.out"'

echo "wine_smoke: $passed passed, $failed failed"
((failed == 0))
