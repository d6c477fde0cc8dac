#!/usr/bin/env bash
# Regenerates the committed sample models under samples/ from our own code
# (examples/make_samples.rs: ModelBuilder + the canonical writers).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo run --quiet --example make_samples
