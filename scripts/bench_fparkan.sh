#!/usr/bin/env bash
# Decode + validate against fparkan (issue 28 item 4), side by side in one
# process: every MSH model of the corpus (loose models and the models inside
# archives, pre-loaded), mshgltf's `msh::read::decode(Strict)` against
# fparkan's `fparkan_nres::decode(Strict)` + `fparkan_msh::decode_msh` +
# `validate_msh`, thread CPU time, best and median of ROUNDS rounds, at 1x
# and 4x the corpus (its models repeated 4 times). Prints a Markdown table.
#
#   scripts/bench_fparkan.sh [--fparkan DIR] [--commit SHA] [--corpus DIR]
#                            [--rounds N] [--mshgltf DIR]
#
# --fparkan: a checkout of github.com/valentineus/fparkan (or any folder with
# its crates/fparkan-{binary,path,nres,msh}); without it the script clones
# the repository at --commit (default below) into $WORK/fparkan, which needs
# the network. The bench crate (scripts/bench_fparkan/) is copied to $WORK
# (default /tmp/mshgltf-bench-fparkan), outside the tree, and built with
# CARGO_TARGET_DIR (default: this tree's target/, so mshgltf's release
# dependencies are reused). BENCH_BREAKDOWN=1 prints where mshgltf's time
# goes instead (NRes parse, whole decode, validate, Model clone).
# --mshgltf: the mshgltf tree to measure (default: this one), e.g. an older
# commit exported with `git archive COMMIT | tar -x -C DIR` for a before/after
# pair (use another WORK for it: the built binary is kept as $WORK/bench-fparkan).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
MSHGLTF=$ROOT
FPARKAN=""
COMMIT=162de8ccabdd3ccf55e1da28532cad6e8345093d
CORPUS="$ROOT/../shared/corpus"
ROUNDS=15
WORK=${WORK:-/tmp/mshgltf-bench-fparkan}
while [ $# -gt 0 ]; do
    case "$1" in
        --fparkan) FPARKAN=$2; shift 2 ;;
        --commit) COMMIT=$2; shift 2 ;;
        --corpus) CORPUS=$2; shift 2 ;;
        --rounds) ROUNDS=$2; shift 2 ;;
        --mshgltf) MSHGLTF=$(cd "$2" && pwd); shift 2 ;;
        -h|--help) sed -n '2,23p' "$0"; exit 0 ;;
        *) echo "unknown argument: $1 (see --help)" >&2; exit 2 ;;
    esac
done
[ -d "$CORPUS" ] || { echo "no corpus at $CORPUS" >&2; exit 2; }
mkdir -p "$WORK"
if [ -z "$FPARKAN" ]; then
    FPARKAN="$WORK/fparkan"
    if [ ! -d "$FPARKAN/.git" ]; then
        git clone --quiet https://github.com/valentineus/fparkan "$FPARKAN" || {
            echo "cannot clone fparkan (offline?): pass --fparkan DIR" >&2
            exit 2
        }
    fi
    git -C "$FPARKAN" checkout --quiet "$COMMIT"
fi
FPARKAN=$(cd "$FPARKAN" && pwd)
for c in binary path nres msh; do
    [ -f "$FPARKAN/crates/fparkan-$c/Cargo.toml" ] || {
        echo "$FPARKAN has no crates/fparkan-$c" >&2
        exit 2
    }
done
BENCH="$WORK/bench"
rm -rf "$BENCH"
mkdir -p "$BENCH"
cp -r "$ROOT/scripts/bench_fparkan/src" "$BENCH/"
sed -e "s#@MSHGLTF@#$MSHGLTF#" -e "s#@FPARKAN@#$FPARKAN#" \
    "$ROOT/scripts/bench_fparkan/Cargo.toml.in" > "$BENCH/Cargo.toml"
# The same dependency versions as the tree (reused from its target/).
cp "$ROOT/Cargo.lock" "$BENCH/Cargo.lock"
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$ROOT/target}
export CARGO_INCREMENTAL=0
(cd "$BENCH" && cargo build --release --quiet)
cp "$CARGO_TARGET_DIR/release/bench-fparkan" "$WORK/bench-fparkan"
echo "mshgltf: $MSHGLTF$(git -C "$MSHGLTF" rev-parse --short HEAD 2>/dev/null | sed 's/^/ @ /')"
echo "fparkan: $FPARKAN$(git -C "$FPARKAN" rev-parse --short HEAD 2>/dev/null | sed 's/^/ @ /')"
echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
"$WORK/bench-fparkan" "$CORPUS" "$ROUNDS"
