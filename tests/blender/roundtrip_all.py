"""Imports and exports, unedited, every model of every archive of a game
folder through the io_scene_parkan add-on, in one Blender process.

    BLENDER_USER_SCRIPTS=TMP/scripts BLENDER_USER_CONFIG=TMP/config \\
    blender -b --factory-startup --python tests/blender/roundtrip_all.py -- \\
        ADDON.zip GAME_DIR WORK_DIR [--limit N]

Run by tests/shared_blender_roundtrip.rs. Per model: File > Import > Parkan
model (the archive entry), File > Export > Parkan model in mode "Edit of the
imported model" (a bare .msh in WORK_DIR), then the bytes are compared with
the archive entry. The scene is emptied between models. Prints one line
`ROUNDTRIP_ALL {json}`: `models` (archive:entry -> "identical", "different",
"libraries written: …" or the error text), `counts`, `seconds`.
"""

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


def main():
    t0 = time.time()
    if not harness.install_addon(ZIP, out):
        return
    from io_scene_parkan import scene as sc
    os.makedirs(WORK, exist_ok=True)
    archives = sorted(f for f in os.listdir(GAME) if f.lower().endswith(".rlb"))
    done = 0
    for arch in archives:
        path = os.path.join(GAME, arch)
        entries = [(n, b) for n, b in nres_entries(path) if n.lower().endswith(".msh")]
        for name, data in entries:
            if limit is not None and done >= limit:
                break
            done += 1
            key = f"{arch}:{name}"
            target = os.path.join(WORK, f"{os.path.splitext(arch)[0]}_{name}")
            try:
                clear_scene()
                r = bpy.ops.import_scene.parkan_msh(filepath=path, entry_name=name, fps=24.0)
                if "FINISHED" not in r:
                    out["models"][key] = f"import: {r}"
                    continue
                stem = os.path.splitext(name)[0]
                coll = bpy.data.collections.get(stem)
                if coll is None:
                    out["models"][key] = "import: no collection"
                    continue
                sc.set_active_collection(bpy.context, coll)
                r = bpy.ops.export_scene.parkan_msh(filepath=target, mode="BASE", target="MSH",
                                                    replace_file=True)
                if "FINISHED" not in r:
                    out["models"][key] = f"export: {r}"
                    continue
                got = open(target, "rb").read()
                # An unedited model writes no library either (the add-on
                # passes the game folder: material and texture edits would
                # be written beside the output).
                libs = sorted(f for f in os.listdir(WORK) if f.lower().endswith(".lib"))
                for f in libs:
                    os.remove(os.path.join(WORK, f))
                if got != data:
                    out["models"][key] = "different"
                elif libs:
                    out["models"][key] = "libraries written: " + ", ".join(libs)
                else:
                    out["models"][key] = "identical"
                    os.remove(target)
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
