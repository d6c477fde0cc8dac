#!/usr/bin/env bash
# Runs the command-line recipes of docs/modding.md that work today on the
# committed samples/ (no ../shared needed), in a temporary folder, and
# checks each result: exit codes, byte-identity of unedited round trips,
# the files written, and that each edit is in the converted result.
#
#   scripts/modding_recipes.sh [BIN_DIR]     (default: target/release)
#   KEEP=1 scripts/modding_recipes.sh ...    (keep the temporary folder)
#
# Exit code 0 when every check passed,
# 1 when one failed, 2 on a usage error.
set -uo pipefail
cd "$(dirname "$0")/.."
root=$PWD

bin=${1:-target/release}
case $bin in /*) ;; *) bin=$root/$bin ;; esac
m2g=$bin/msh2gltf
g2m=$bin/gltf2msh
for t in "$m2g" "$g2m"; do
  if [ ! -x "$t" ]; then
    echo "usage: scripts/modding_recipes.sh [BIN_DIR]: no executable $t (cargo build --release --bins)" >&2
    exit 2
  fi
done
command -v python3 >/dev/null || { echo "modding_recipes: needs python3 (glTF edits and checks)" >&2; exit 2; }

S=$root/samples
samples_sum() { find "$S" -type f -exec cksum {} + | sort; }
samples_before=$(samples_sum)
tmp=$(mktemp -d)
# KEEP=1 keeps the temporary folder (every recipe's files and NAME.out) to look at.
if [ "${KEEP:-}" = 1 ]; then echo "(files kept in $tmp)"; else trap 'rm -rf "$tmp"' EXIT; fi
cd "$tmp"

passed=0
failed=0
# Each recipe is one chain of steps ending in `&& pass TEXT || fail TEXT`.
pass() { passed=$((passed + 1)); echo "ok    $1"; }
fail() { failed=$((failed + 1)); echo "FAIL  $1"; }
# run NAME EXPECTED_CODE CMD...: runs CMD (its output in NAME.out) and checks
# its exit code; a wrong one is printed with the output's first lines.
run() {
  local name=$1 want=$2; shift 2
  "$@" >"$name.out" 2>&1
  local code=$?
  if [ "$code" -ne "$want" ]; then
    echo "      $name: exit code $code, expected $want: $*"
    sed 's/^/      | /' "$name.out" | head -5
    return 1
  fi
  return 0
}
same() { cmp -s "$1" "$2"; }
has() { grep -q -- "$2" "$1"; }

# The glTF edits a modder makes in an editor, and the checks on results.
cat >edit.py <<'PY'
import json, struct, sys

def load(path):
    j = json.load(open(path, encoding="utf-8"))
    buf = None
    if j.get("buffers") and "uri" in j["buffers"][0]:
        import os
        buf = bytearray(open(os.path.join(os.path.dirname(path) or ".", j["buffers"][0]["uri"]), "rb").read())
    return j, buf

def save(j, buf, out):
    if buf is not None:
        name = out.rsplit("/", 1)[-1].rsplit(".", 1)[0] + ".bin"
        j["buffers"][0]["uri"] = name
        open(out.rsplit("/", 1)[0] + "/" + name if "/" in out else name, "wb").write(buf)
    json.dump(j, open(out, "w", encoding="utf-8"))

def where(j, i):
    a = j["accessors"][i]
    bv = j["bufferViews"][a["bufferView"]]
    n = {"SCALAR": 1, "VEC2": 2, "VEC3": 3, "VEC4": 4}[a["type"]]
    return bv.get("byteOffset", 0) + a.get("byteOffset", 0), n, a["count"]

def node_index(j, name):
    return next(i for i, n in enumerate(j["nodes"]) if n.get("name") == name)

cmd, args = sys.argv[1], sys.argv[2:]
if cmd == "node":  # IN OUT NODE PROPERTY JSON: set a node's translation/rotation/scale
    src, out, node, prop, value = args
    j, buf = load(src)
    j["nodes"][node_index(j, node)][prop] = json.loads(value)
    save(j, buf, out)
elif cmd == "scale-mesh":  # IN OUT NODE FACTOR: scale the vertices of a node's mesh (Edit mode, S)
    src, out, node, f = args
    j, buf = load(src)
    f = float(f)
    for p in j["meshes"][j["nodes"][node_index(j, node)]["mesh"]]["primitives"]:
        i = p["attributes"]["POSITION"]
        off, n, count = where(j, i)
        for k in range(count * n):
            struct.pack_into("<f", buf, off + 4 * k, struct.unpack_from("<f", buf, off + 4 * k)[0] * f)
        a = j["accessors"][i]
        a["min"], a["max"] = [v * f for v in a["min"]], [v * f for v in a["max"]]
    save(j, buf, out)
elif cmd == "key":  # IN OUT NODE PATH KEY COMPONENT DELTA: move one animation key
    src, out, node, path, key, comp, delta = args
    j, buf = load(src)
    ni = node_index(j, node)
    a = j["animations"][0]
    ch = next(c for c in a["channels"] if c["target"]["node"] == ni and c["target"]["path"] == path)
    off, n, _ = where(j, a["samplers"][ch["sampler"]]["output"])
    at = off + 4 * (int(key) * n + int(comp))
    struct.pack_into("<f", buf, at, struct.unpack_from("<f", buf, at)[0] + float(delta))
    save(j, buf, out)
elif cmd == "colour":  # IN OUT MATERIAL R G B A: recolour a material
    src, out, m, *rgba = args
    j, buf = load(src)
    j["materials"][int(m)]["pbrMetallicRoughness"]["baseColorFactor"] = [float(x) for x in rgba]
    save(j, buf, out)
elif cmd == "image":  # IN OUT IMAGE PNG: point an image at another PNG file
    src, out, i, png = args
    j, buf = load(src)
    j["images"][int(i)] = {"uri": png, "mimeType": "image/png", "name": j["images"][int(i)].get("name", "")}
    save(j, buf, out)
elif cmd == "rename":  # IN OUT PREFIX: give materials, textures and images new names (a new model's own)
    src, out, prefix = args
    j, buf = load(src)
    for k in ("materials", "textures", "images"):
        for x in j.get(k, []):
            x["name"] = prefix + x["name"].split(".")[0]
            x.pop("extras", None)
    save(j, buf, out)
elif cmd == "node-value":  # GLTF NODE PROPERTY: print a node's property as JSON
    j, _ = load(args[0])
    print(json.dumps(j["nodes"][node_index(j, args[1])].get(args[2])))
elif cmd == "key-value":  # GLTF NODE PATH KEY: print one key of animation 0
    j, buf = load(args[0])
    ni = node_index(j, args[1])
    a = j["animations"][0]
    ch = next(c for c in a["channels"] if c["target"]["node"] == ni and c["target"]["path"] == args[2])
    off, n, _ = where(j, a["samplers"][ch["sampler"]]["output"])
    print(json.dumps(list(struct.unpack_from("<%df" % n, buf, off + 4 * n * int(args[3])))))
elif cmd == "mesh-max":  # GLTF NODE: the POSITION max of a node's first primitive
    j, _ = load(args[0])
    p = j["meshes"][j["nodes"][node_index(j, args[1])]["mesh"]]["primitives"][0]
    print(json.dumps(j["accessors"][p["attributes"]["POSITION"]]["max"]))
elif cmd == "near":  # A B [TOL]: two JSON number lists equal within TOL (exit 0) or not (exit 1)
    a, b = json.loads(args[0]), json.loads(args[1])
    tol = float(args[2]) if len(args) > 2 else 1e-3
    sys.exit(0 if len(a) == len(b) and all(abs(x - y) <= tol for x, y in zip(a, b)) else 1)
elif cmd == "report":  # REPORT.json KEY...: print a field of a gltf2msh --report
    v = json.load(open(args[0], encoding="utf-8"))
    for k in args[1:]:
        v = v[k]
    print(json.dumps(v))
elif cmd == "entries":  # LIST.json: the entry names of msh2gltf --list
    print(" ".join(m["name"] for m in json.load(open(args[0], encoding="utf-8"))["models"]))
PY
py() { python3 edit.py "$@"; }

echo "== export (msh2gltf)"
run export_bare 0 "$m2g" "$S/anim_rotor.msh" rotor.gltf && [ -s rotor.gltf ] && [ -s rotor.bin ] \
  && pass "a bare model to .gltf + .bin" || fail "a bare model to .gltf + .bin"
run export_entry 0 "$m2g" "$S/demo/demo.rlb:TOWER.msh" tower.gltf && has export_entry.out "2 textures" \
  && pass "an archive entry, textured from the libraries beside the archive" || fail "an archive entry, textured from the libraries beside the archive"
run list 0 "$m2g" --list "$S/demo/demo.rlb" && mv list.out list.json && [ "$(py entries list.json)" = "TOWER.msh" ] \
  && pass "--list names the archive's models" || fail "--list names the archive's models"
run export_archive 0 "$m2g" "$S/demo/demo.rlb" demo && [ -s demo/TOWER.glb ] \
  && pass "a whole archive into a folder" || fail "a whole archive into a folder"
run textures_out 0 "$m2g" "$S/demo/demo.rlb:TOWER.msh" tower.glb --textures-out textures \
  && [ -s textures/STEEL_TX.0.png ] && [ -s textures/GLASS_TX.0.png ] \
  && pass "--textures-out writes the library textures as PNG" || fail "--textures-out writes the library textures as PNG"

echo "== unedited round trips (gltf2msh --base)"
run back_bare 0 "$g2m" rotor.gltf --base "$S/anim_rotor.msh" -o rotor.msh \
  && same rotor.msh "$S/anim_rotor.msh" && has back_bare.out unchanged \
  && pass "bare model: byte for byte, \"unchanged\"" || fail "bare model: byte for byte, \"unchanged\""
run back_glb 0 "$g2m" tower.glb --base "$S/demo/demo.rlb:TOWER.msh" -o tower.msh && has back_glb.out unchanged \
  && pass "archive entry to a bare .msh: \"unchanged\"" || fail "archive entry to a bare .msh: \"unchanged\""
run back_archive 0 "$g2m" tower.gltf --base "$S/demo/demo.rlb:TOWER.msh" -o demo_copy.rlb \
  && same demo_copy.rlb "$S/demo/demo.rlb" \
  && pass "archive copy: byte for byte" || fail "archive copy: byte for byte"
run base_kept 2 "$g2m" tower.gltf --base "$S/demo/demo.rlb:TOWER.msh" -o "$S/demo/demo.rlb" \
  && has base_kept.out "refusing to overwrite the input" \
  && pass "the base is never overwritten (exit 2)" || fail "the base is never overwritten (exit 2)"
run no_clobber 2 "$g2m" tower.gltf --base "$S/demo/demo.rlb:TOWER.msh" -o demo_copy.rlb \
  && has no_clobber.out "use --force" \
  && pass "an existing output needs --force (exit 2)" || fail "an existing output needs --force (exit 2)"

echo "== move or scale a part"
py node tower.gltf move.gltf turret translation '[0, 2.0, 0]'
run move 0 "$g2m" move.gltf --base "$S/demo/demo.rlb:TOWER.msh" -o move.rlb --report move.json \
  && [ "$(py report move.json import changed_tracks)" = "[1]" ] \
  && run move_check 0 "$m2g" move.rlb:TOWER.msh move_check.gltf \
  && py near "$(py node-value move_check.gltf turret translation)" '[0, 2.0, 0]' \
  && pass "a moved part is written (archive copy; re-exported at its new place)" || fail "a moved part is written (archive copy; re-exported at its new place)"
py node tower.gltf turn.gltf turret rotation '[0, 0.5, 0, 0.8660254]'
run turn 0 "$g2m" turn.gltf --base "$S/demo/demo.rlb:TOWER.msh" -o turn.msh \
  && run turn_check 0 "$m2g" turn.msh turn_check.gltf \
  && py near "$(py node-value turn_check.gltf turret rotation)" '[0, 0.5, 0, 0.8660254]' \
  && pass "a turned part is written" || fail "a turned part is written"
py scale-mesh rotor.gltf vscale.gltf tip 2
run vscale 0 "$g2m" vscale.gltf --base "$S/anim_rotor.msh" -o vscale.msh --report vscale.json \
  && [ "$(py report vscale.json import moved_vertices)" = 24 ] \
  && run vscale_check 0 "$m2g" vscale.msh vscale_check.gltf \
  && py near "$(py mesh-max vscale_check.gltf tip)" "$(py mesh-max vscale.gltf tip)" \
  && pass "a part scaled in Edit mode (its vertices) is written" || fail "a part scaled in Edit mode (its vertices) is written"
py node tower.gltf oscale.gltf turret scale '[1.5, 1.5, 1.5]'
run oscale 0 "$g2m" oscale.gltf --base "$S/demo/demo.rlb:TOWER.msh" -o oscale.msh --report oscale.json \
  && [ "$(py report oscale.json import unchanged)" = false ] && [ "$(py report oscale.json import baked_nodes)" != "[]" ] \
  && ! same oscale.msh tower.msh \
  && pass "an Object-mode scale is written (baked into the part's vertices)" \
  || fail "an Object-mode scale is written (baked into the part's vertices)"
# An animated part moved without a key (its static translation on its
# channel at no frame): the move is applied to every key.
py node rotor.gltf amove.gltf tip translation '[1.75, 0, 0]'
amove_want=$(python3 -c 'import json, sys; v = json.loads(sys.argv[1]); v[0] += 0.25; print(json.dumps(v))' \
  "$(py key-value rotor.gltf tip translation 1)")
run amove 0 "$g2m" amove.gltf --base "$S/anim_rotor.msh" -o amove.msh --report amove.json \
  && [ "$(py report amove.json import changed_tracks)" = "[2]" ] \
  && [ "$(py report amove.json import baked_nodes)" != "[]" ] \
  && run amove_check 0 "$m2g" amove.msh amove_check.gltf \
  && py near "$(py key-value amove_check.gltf tip translation 1)" "$amove_want" \
  && pass "an animated part moved without a key is written (the move applied to every key)" \
  || fail "an animated part moved without a key is written (the move applied to every key)"

echo "== edit an animation"
py key rotor.gltf key.gltf tip translation 1 1 0.25
run key 0 "$g2m" key.gltf --base "$S/anim_rotor.msh" -o key.msh --report key.json \
  && [ "$(py report key.json import changed_tracks)" = "[2]" ] \
  && run key_check 0 "$m2g" key.msh key_check.gltf \
  && py near "$(py key-value key_check.gltf tip translation 1)" '[1.5, 0.65, 0]' \
  && pass "a timeline key edit is written" || fail "a timeline key edit is written"

echo "== recolour, retexture (gltf2msh --base ... --game-dir)"
py colour tower.gltf recolour.gltf 0 1 0 0 0
run recolour_refused 1 "$g2m" recolour.gltf --base "$S/demo/demo.rlb:TOWER.msh" -o recolour.msh \
  && has recolour_refused.out gltf.material_edit && has recolour_refused.out -- --game-dir && [ ! -e recolour.msh ] \
  && pass "a recolour without --game-dir is refused naming --game-dir, nothing written" \
  || fail "a recolour without --game-dir is refused naming --game-dir, nothing written"
mkdir -p recolour
run recolour 0 "$g2m" recolour.gltf --base "$S/demo/demo.rlb:TOWER.msh" -o recolour/TOWER.msh --game-dir "$S/demo" \
  && [ -s recolour/Material.lib ] && ! same recolour/Material.lib "$S/demo/Material.lib" \
  && [ ! -e recolour/Textures.lib ] \
  && pass "a recolour with --game-dir writes a copy of Material.lib beside the model (Textures.lib untouched)" \
  || fail "a recolour with --game-dir writes a copy of Material.lib beside the model (Textures.lib untouched)"
py image tower.gltf retexture.gltf 0 textures/GLASS_TX.0.png
mkdir -p retexture
run retexture 0 "$g2m" retexture.gltf --base "$S/demo/demo.rlb:TOWER.msh" -o retexture/TOWER.msh --game-dir "$S/demo" \
  && [ -s retexture/Textures.lib ] && ! same retexture/Textures.lib "$S/demo/Textures.lib" \
  && [ ! -e retexture/Material.lib ] && has retexture.out STEEL_TX.0 \
  && pass "a repainted texture with --game-dir: a copy of Textures.lib with STEEL_TX.0 re-encoded" \
  || fail "a repainted texture with --game-dir: a copy of Textures.lib with STEEL_TX.0 re-encoded"

echo "== new model (gltf2msh without --base)"
mkdir -p new
run new_bare 0 "$g2m" rotor.gltf -o new/ROTOR2.msh && [ -s new/ROTOR2.msh ] && [ -s new/ROTOR2.wea ] \
  && run new_bare_check 0 "$m2g" new/ROTOR2.msh new/rotor2.glb \
  && pass "a new bare model and its .wea" || fail "a new bare model and its .wea"
run new_into 0 "$g2m" rotor.gltf --into "$S/demo/demo.rlb" --name ROTOR2 -o new/demo_plus.rlb \
  && run new_into_list 0 "$m2g" --list new/demo_plus.rlb && mv new_into_list.out new_into_list.json \
  && [ "$(py entries new_into_list.json)" = "TOWER.msh ROTOR2.msh" ] \
  && pass "a new model added to a copy of an archive" || fail "a new model added to a copy of an archive"
run new_collision 2 "$g2m" tower.gltf -o new/T.msh --game-dir "$S/demo" \
  && has new_collision.out lib.collision && [ ! -e new/T.msh ] \
  && pass "materials named like existing library entries are refused (exit 2), nothing written" || fail "materials named like existing library entries are refused (exit 2), nothing written"
py rename tower.gltf mine.gltf MY
mkdir -p libs
run new_libs 0 "$g2m" mine.gltf --into "$S/demo/demo.rlb" --name MYTOWER -o libs/demo.rlb --game-dir "$S/demo" \
  && [ -s libs/Material.lib ] && [ -s libs/Textures.lib ] \
  && run new_libs_check 0 "$m2g" libs/demo.rlb:MYTOWER.msh libs/mytower.glb \
  && has new_libs_check.out "2 textures" && has new_libs_check.out "libraries: libs (Material.lib, Textures.lib)" \
  && [ "$(wc -c <libs/Material.lib)" -gt "$(wc -c <"$S/demo/Material.lib")" ] \
  && pass "a new model with its materials and textures in copies of the libraries" || fail "a new model with its materials and textures in copies of the libraries"

echo "== several models of one archive (install into the game)"
run chain_export 0 "$m2g" new/demo_plus.rlb:TOWER.msh chain_tower.gltf \
  && run chain_export2 0 "$m2g" new/demo_plus.rlb:ROTOR2.msh chain_rotor.gltf \
  && py node chain_tower.gltf chain_tower_moved.gltf turret translation '[0, 2.0, 0]' \
  && py key chain_rotor.gltf chain_rotor_key.gltf tip translation 1 1 0.25 \
  && run chain_1 0 "$g2m" chain_tower_moved.gltf --base new/demo_plus.rlb:TOWER.msh -o chain1.rlb \
  && run chain_2 0 "$g2m" chain_rotor_key.gltf --base chain1.rlb:ROTOR2.msh -o chain2.rlb \
  && run chain_check 0 "$m2g" chain2.rlb:TOWER.msh chain_check_tower.gltf \
  && run chain_check2 0 "$m2g" chain2.rlb:ROTOR2.msh chain_check_rotor.gltf \
  && py near "$(py node-value chain_check_tower.gltf turret translation)" '[0, 2.0, 0]' \
  && py near "$(py key-value chain_check_rotor.gltf tip translation 1)" '[1.5, 0.65, 0]' \
  && pass "a second edit against the first archive copy keeps both edits" || fail "a second edit against the first archive copy keeps both edits"

[ "$(samples_sum)" = "$samples_before" ] && pass "samples/ unchanged by every recipe" \
  || fail "samples/ unchanged by every recipe"

echo "== $passed passed, $failed failed"
[ "$failed" -eq 0 ]
