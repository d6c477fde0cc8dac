#!/usr/bin/env bash
# Batch I/O and memory (issue 28 items 1 and 2): what `msh2gltf GAME OUT`
# reads and how much memory it holds, on a game folder (default
# ../shared/corpus).
#
#   scripts/bench_batch_io.sh [CORPUS] [BIN]
#
# Prints, for one batch of CORPUS under `strace -f -y`:
#   - bytes read from files under CORPUS (read/pread64 on their descriptors)
#     divided by CORPUS's total file bytes (acceptance: <= 1.25);
#   - readlink/readlinkat calls vs the files written (acceptance: <=);
#   - bytes read from each library (Material.lib, Textures.lib,
#     LightMap.lib) as a multiple of its size (read once per run: about 1);
# then peak RSS (`/usr/bin/time -f %M`) of a batch over CORPUS (1x) and over
# a folder holding 4 copies of it side by side (4x, hard links under /tmp,
# removed after), and their ratio (acceptance: 4x <= 1.3 x 1x);
# then discovery of a folder of 100 000 tiny files (wall time, peak RSS).
# BIN defaults to target/release/msh2gltf (built when missing).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
corpus="$(cd "${1:-$root/../shared/corpus}" && pwd)"
bin="${2:-$root/target/release/msh2gltf}"
[ -x "$bin" ] || cargo build --release --bin msh2gltf --manifest-path "$root/Cargo.toml" >&2
work="$(mktemp -d /tmp/bench-io.XXXXXX)"
trap 'rm -rf "$work"' EXIT

size=$(find "$corpus" -type f -printf '%s\n' | awk '{s+=$1} END {print s}')
echo "corpus: $corpus, $size bytes in $(find "$corpus" -type f | wc -l) files"
echo "load: $(uptime | sed 's/.*load average: //')"

# 1. Bytes read and readlink calls.
strace -f -y -qq -s 0 -e trace=read,pread64,readlink,readlinkat \
  -o "$work/trace" "$bin" "$corpus" "$work/out" -q >/dev/null 2>&1 || true
outputs=$(find "$work/out" -type f | wc -l)
python3 - "$work/trace" "$corpus" "$size" "$outputs" <<'EOF'
import re, sys
trace, corpus, size, outputs = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
call = re.compile(r'^(\d+)\s+(read|pread64|readlink|readlinkat)\((.*)')
resumed = re.compile(r'^(\d+)\s+<\.\.\. (read|pread64|readlink|readlinkat) resumed>.*=\s*(-?\d+)')
ret = re.compile(r'=\s*(-?\d+)(\s.*)?$')
import collections, os
pending = {}
read_in = read_all = links = links_ok = 0
libs = collections.Counter()
def done(name, args, n):
    global read_in, read_all, links, links_ok
    if name.startswith('readlink'):
        links += 1
        links_ok += n >= 0
    elif n > 0:
        read_all += n
        m = re.match(r'\d+<([^>]*)>', args)
        if m and m.group(1).startswith(corpus + '/'):
            read_in += n
            if os.path.basename(m.group(1)).lower() in ('material.lib', 'textures.lib', 'lightmap.lib'):
                libs[m.group(1)] += n
for line in open(trace, errors='replace'):
    m = call.match(line)
    if m:
        pid, name, rest = m.groups()
        if rest.endswith('<unfinished ...>'):
            pending[pid] = (name, rest)
            continue
        r = ret.search(rest)
        done(name, rest, int(r.group(1)) if r else -1)
        continue
    m = resumed.match(line)
    if m and m.group(1) in pending:
        name, args = pending.pop(m.group(1))
        done(name, args, int(m.group(3)))
print(f"bytes read from the corpus: {read_in} = {read_in / size:.2f}x its size "
      f"(all reads of the process: {read_all})")
print(f"readlink calls: {links} ({links_ok} succeeded) for {outputs} outputs "
      f"= {links / max(outputs, 1):.2f} per output")
for path, n in sorted(libs.items()):
    print(f"{os.path.relpath(path, corpus)}: {n} bytes read = {n / os.path.getsize(path):.2f}x its size")
EOF
rm -rf "$work/out" "$work/trace"

# 2. Peak RSS, 1x and 4x.
mkdir -p "$work/x4"
for i in 1 2 3 4; do cp -al "$corpus" "$work/x4/game$i" 2>/dev/null || cp -a "$corpus" "$work/x4/game$i"; done
rss() { # INPUT -> "KiB seconds"
  /usr/bin/time -f '%M %e' -o "$work/time" "$bin" "$1" "$work/out" -q >/dev/null 2>&1 || true
  rm -rf "$work/out"
  cat "$work/time" | tail -1
}
read -r r1 t1 < <(rss "$corpus")
read -r r4 t4 < <(rss "$work/x4")
echo "peak RSS 1x: $((r1 / 1024)) MiB ($t1 s); 4x: $((r4 / 1024)) MiB ($t4 s); ratio $(echo "scale=2; $r4 / $r1" | bc)"
rm -rf "$work/x4"

# 3. Discovery of 100 000 tiny files (not models: each is skipped).
mkdir -p "$work/tiny"
python3 - "$work/tiny" <<'EOF'
import os, sys
d = sys.argv[1]
for i in range(100):
    sub = os.path.join(d, f"d{i:03}")
    os.mkdir(sub)
    for j in range(1000):
        with open(os.path.join(sub, f"f{j:04}.txt"), "wb") as f:
            f.write(b"tiny file %d\n" % j)
EOF
read -r rt tt < <(rss "$work/tiny")
echo "100 000 tiny files: $tt s, peak RSS $((rt / 1024)) MiB"
