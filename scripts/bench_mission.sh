#!/usr/bin/env bash
# Release benchmark of the largest corpus mission (issue 25): wall time and
# peak RSS (/usr/bin/time -v) of `msh2gltf data.tma m.glb` and of
# `gltf2msh m.glb --base data.tma -o data.tma` back, RUNS times each (the
# best run is printed), and whether the unedited way back is byte-identical.
#
#   scripts/bench_mission.sh [BIN_DIR] [CORPUS] [RUNS]
#
# BIN_DIR defaults to target/release (build it: cargo build --release
# --bins), CORPUS to ../shared/corpus, RUNS to 3. The largest mission is
# the corpus data.tma with the most bytes.
set -euo pipefail
BIN=${1:-target/release}
CORPUS=${2:-../shared/corpus}
RUNS=${3:-3}
TMA=$(find "$CORPUS/MISSIONS" -iname data.tma -printf '%s\t%p\n' | sort -n | tail -1 | cut -f2-)
[ -n "$TMA" ] || { echo "no data.tma under $CORPUS/MISSIONS" >&2; exit 2; }
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

# best wall seconds, CPU seconds (user + system) and peak RSS (MB) of RUNS
# runs of "$@" (on a loaded machine the CPU time is the steadier figure)
measure() {
    local best_s="" best_kb="" best_cpu=""
    for _ in $(seq "$RUNS"); do
        /usr/bin/time -v "$@" 2> "$TMP/time.txt" > /dev/null
        local wall kb s cpu
        wall=$(sed -n 's/.*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' "$TMP/time.txt")
        kb=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$TMP/time.txt")
        s=$(echo "$wall" | awk -F: '{ t = 0; for (i = 1; i <= NF; i++) t = t * 60 + $i; print t }')
        cpu=$(awk -F': ' '/User time|System time/ { t += $2 } END { print t }' "$TMP/time.txt")
        if [ -z "$best_cpu" ] || awk "BEGIN { exit !($cpu < $best_cpu) }"; then best_cpu=$cpu; fi
        if [ -z "$best_s" ] || awk "BEGIN { exit !($s < $best_s) }"; then best_s=$s; fi
        if [ -z "$best_kb" ] || [ "$kb" -lt "$best_kb" ]; then best_kb=$kb; fi
    done
    echo "$best_s s wall, $best_cpu s CPU, $(awk "BEGIN { printf \"%.1f\", $best_kb / 1024 }") MB peak RSS"
}

echo "mission: $TMA ($(stat -c %s "$TMA") bytes), best of $RUNS"
echo "export  (msh2gltf):        $(measure "$BIN/msh2gltf" "$TMA" "$TMP/m.glb" -q --force)"
echo "back    (gltf2msh --base): $(measure "$BIN/gltf2msh" "$TMP/m.glb" --base "$TMA" -o "$TMP/data.tma" --force)"
if cmp -s "$TMA" "$TMP/data.tma"; then
    echo "way back: byte-identical"
else
    echo "way back: DIFFERS from the source data.tma"
    exit 1
fi
