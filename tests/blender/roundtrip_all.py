"""Imports and exports, unedited, every model of every archive of a game
folder through the io_scene_parkan add-on, in one Blender process.

    BLENDER_USER_SCRIPTS=TMP/scripts BLENDER_USER_CONFIG=TMP/config \\
    blender -b --factory-startup --python tests/blender/roundtrip_all.py -- \\
        ADDON.zip GAME_DIR WORK_DIR [--limit N] [--models LIST.json]

Run by tests/shared_blender_roundtrip.rs (every archive model, exported as a
bare .msh) and tests/shared_blender_matrix.rs (`--models`: a JSON list of
"ARCHIVE:ENTRY" and "models/NAME.msh" under GAME_DIR; an archive entry is
exported as an archive copy, the mode a modder installs with). Per model:
File > Import > Parkan model (the archive entry or the bare file), File >
Export > Parkan model in mode "Edit of the imported model" (into WORK_DIR),
then the bytes are compared with the archive entry (bare .msh), the whole
archive (archive copy) or the model file. The scene is emptied between
models. Prints one line `ROUNDTRIP_ALL {json}`: `models` (key ->
"identical", "different", "libraries written: …" or the error text),
`counts`, `seconds`.
"""

import json

import os
import struct
import sys
import time

import bpy

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402

argv = harness.args()
limit = None
if "--limit" in argv:
    i = argv.index("--limit")
    limit = int(argv[i + 1])
    del argv[i:i + 2]
listed = None
if "--models" in argv:
    i = argv.index("--models")
    listed = json.load(open(argv[i + 1], encoding="utf-8"))
    del argv[i:i + 2]
ZIP, GAME, WORK = (os.path.abspath(a) for a in argv[:3])


def nres_entries(path):
    """(name, bytes) of every entry of an NRes file (format-notes §1)."""
    b = open(path, "rb").read()
    if b[:4] != b"NRes":
        return []
    n, total = struct.unpack_from("<iI", b, 8)
    d = total - n * 64
    out = []
    for i in range(n):
        o = d + i * 64
        size = struct.unpack_from("<I", b, o + 12)[0]
        name = b[o + 20:o + 56].split(b"\0")[0].decode("cp1251")
        off = struct.unpack_from("<I", b, o + 56)[0]
        out.append((name, b[off:off + size]))
    return out


def clear_scene():
    scene = bpy.context.scene
    for c in list(bpy.data.collections):
        bpy.data.collections.remove(c)
    for data in (bpy.data.objects, bpy.data.meshes, bpy.data.materials, bpy.data.images,
                 bpy.data.actions, bpy.data.node_groups, bpy.data.cameras, bpy.data.lights,
                 bpy.data.textures):
        for x in list(data):
            data.remove(x)
    if "msh" in scene.keys():
        del scene["msh"]


out = {"models": {}, "errors": []}


def round_trip(sc, arch, name, target_kind):
    """Imports one model and exports it straight back (module docs); its
    verdict. `name` None: the bare model file `arch`; `target_kind`
    None: a bare .msh compared with the entry, "ARCHIVE": an archive copy
    compared with the archive, "MSH": the bare file compared with itself."""
    path = os.path.join(GAME, arch)
    clear_scene()
    if name is None:
        r = bpy.ops.import_scene.parkan_msh(filepath=path, fps=24.0)
        stem, want = os.path.splitext(os.path.basename(arch))[0], open(path, "rb").read()
        target = os.path.join(WORK, os.path.basename(arch))
    else:
        r = bpy.ops.import_scene.parkan_msh(filepath=path, entry_name=name, fps=24.0)
        stem = os.path.splitext(name)[0]
        if target_kind == "ARCHIVE":
            want = open(path, "rb").read()
            target = os.path.join(WORK, f"{os.path.splitext(arch)[0]}_{stem}.rlb")
        else:
            want = dict(nres_entries(path))[name]
            target = os.path.join(WORK, f"{os.path.splitext(arch)[0]}_{name}")
    if "FINISHED" not in r:
        return f"import: {r}"
    coll = next((c for c in bpy.data.collections if c.name == stem
                 or ("msh" in c.keys() and str(c["msh"].get("source", "")).endswith(name or arch))),
                None)
    if coll is None:
        return "import: no collection"
    sc.set_active_collection(bpy.context, coll)
    r = bpy.ops.export_scene.parkan_msh(filepath=target, mode="BASE",
                                        target="ARCHIVE" if target_kind == "ARCHIVE" else "MSH",
                                        replace_file=True)
    if "FINISHED" not in r:
        return f"export: {r}"
    got = open(target, "rb").read()
    # An unedited model writes no library either (the add-on passes the
    # game folder: material and texture edits would be written beside the
    # output).
    libs = sorted(f for f in os.listdir(WORK) if f.lower().endswith(".lib"))
    for f in libs:
        os.remove(os.path.join(WORK, f))
    if got != want:
        return "different"
    if libs:
        return "libraries written: " + ", ".join(libs)
    os.remove(target)
    return "identical"


def main():
    t0 = time.time()
    if not harness.install_addon(ZIP, out):
        return
    from io_scene_parkan import scene as sc
    os.makedirs(WORK, exist_ok=True)
    if listed is None:
        archives = sorted(f for f in os.listdir(GAME) if f.lower().endswith(".rlb"))
        todo = [(arch, name, None) for arch in archives
                for name, _ in nres_entries(os.path.join(GAME, arch)) if name.lower().endswith(".msh")]
        if limit is not None:
            todo = todo[:limit]
    else:
        todo = [tuple(k.split(":", 1)) + ("ARCHIVE",) if ":" in k else (k, None, "MSH")
                for k in listed]
    for arch, name, target_kind in todo:
        key = f"{arch}:{name}" if name else arch
        try:
            out["models"][key] = round_trip(sc, arch, name, target_kind)
        except Exception as e:  # noqa: BLE001 - every failure is recorded per model
            msg = str(e).strip().splitlines()
            out["models"][key] = "error: " + (msg[-1] if msg else type(e).__name__)
    counts = {}
    for v in out["models"].values():
        k = v if v in ("identical", "different") else "error"
        counts[k] = counts.get(k, 0) + 1
    out["counts"] = counts
    out["seconds"] = round(time.time() - t0, 1)
    out["blender"] = bpy.app.version_string


harness.run("ROUNDTRIP_ALL", main, out)
