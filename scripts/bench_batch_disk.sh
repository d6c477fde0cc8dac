#!/usr/bin/env bash
# Batch durability cost (issue 15, item 7): msh2gltf over a game folder
# (default ../shared/corpus) written to a folder on disk and to tmpfs
# (/dev/shm), RUNS times each (fresh output folder every run); prints the
# median wall time of each and their ratio. The batch flushes once at the
# end (docs/safety.md, batch durability), so disk should be within 1.5x.
#
#   scripts/bench_batch_disk.sh [CORPUS] [RUNS]
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
corpus="${1:-$root/../shared/corpus}"
runs="${2:-5}"
bin="$root/target/release/msh2gltf"
[ -x "$bin" ] || cargo build --release --bins --manifest-path "$root/Cargo.toml" >&2
disk="$(mktemp -d "$root/target/bench-batch.XXXXXX")"
shm="$(mktemp -d /dev/shm/bench-batch.XXXXXX)"
trap 'rm -rf "$disk" "$shm"' EXIT
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
time_run() { # OUT_DIR -> seconds
  local t0 t1
  rm -rf "$1/out"
  t0=$(date +%s.%N)
  "$bin" "$corpus" "$1/out" -q --jobs 2 >/dev/null 2>&1 || true
  t1=$(date +%s.%N)
  echo "$t1 - $t0" | bc -l
}
sync
d=(); s=()
for _ in $(seq "$runs"); do
  d+=("$(time_run "$disk")")
  s+=("$(time_run "$shm")")
done
md=$(printf '%s\n' "${d[@]}" | median)
ms=$(printf '%s\n' "${s[@]}" | median)
files=$(find "$disk/out" -type f | wc -l)
printf 'outputs: %s files\ndisk:  median %.3f s (%s)\ntmpfs: median %.3f s (%s)\nratio: %.2f\n' \
  "$files" "$md" "${d[*]}" "$ms" "${s[*]}" "$(echo "$md / $ms" | bc -l)"
