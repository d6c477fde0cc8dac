"""Issue 39 through the add-on: what a vertex edit reports, and models whose
vertices Blender splits coming back unedited.

    blender -b --factory-startup --python tests/blender/vertex_report_test.py -- \\
        ADDON.zip SAMPLE.msh WORK_DIR [GAME_DIR ARCHIVE:ENTRY...]

Run by tests/shared_blender_vertex_report.rs in Blender 3.4.1 and PyPI bpy.
1. SAMPLE.msh (samples/lod_tower.msh) through File > Import > Parkan model;
   vertex 0 of the mesh of object "base" (slot 0, whose damaged cell shows
   slot 1) moved by +0.25 along z; File > Export > Parkan model, mode "Edit
   of the imported model", to WORK_DIR/edited.msh. The add-on prints
   gltf2msh's summary line ("parkan: gltf2msh: wrote ...") and the
   operator's warnings on stdout, which the Rust test reads.
2. Each ARCHIVE:ENTRY of GAME_DIR imported with "All cells" and exported
   unedited to WORK_DIR; `split_models` says "identical" or "different".
3. The first ARCHIVE:ENTRY again with vertex 0 of its first mesh object
   moved by +0.25 along z, exported to WORK_DIR/split_edited.msh (between
   the lines SPLIT_EDIT_EXPORT and SPLIT_EDIT_DONE).
Prints one line `VERTEX_REPORT {json}`.
"""

import os
import sys

import bpy

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402

argv = harness.args()
ZIP, SAMPLE, WORK = (os.path.abspath(a) for a in argv[:3])
GAME = os.path.abspath(argv[3]) if len(argv) > 3 else None
ENTRIES = argv[4:]
out = {"errors": [], "blender": bpy.app.version_string, "split_models": {}}
check = harness.checker(out)


def nres_entry(path, want):
    """The bytes of entry `want` of NRes file `path` (format-notes §1)."""
    import struct
    b = open(path, "rb").read()
    n, total = struct.unpack_from("<iI", b, 8)
    d = total - n * 64
    for i in range(n):
        o = d + i * 64
        size = struct.unpack_from("<I", b, o + 12)[0]
        name = b[o + 20:o + 56].split(b"\0")[0].decode("cp1251")
        off = struct.unpack_from("<I", b, o + 56)[0]
        if name.lower() == want.lower():
            return b[off:off + size]
    return None


def main():
    if not harness.install_addon(ZIP, out):
        return
    from io_scene_parkan import scene as sc
    os.makedirs(WORK, exist_ok=True)
    r = bpy.ops.import_scene.parkan_msh(filepath=SAMPLE, fps=24.0)
    check("FINISHED" in r, f"import {SAMPLE}: {r}")
    stem = os.path.splitext(os.path.basename(SAMPLE))[0]
    coll = bpy.data.collections.get(stem)
    if not check(coll is not None, f"no collection {stem}"):
        return
    o = next(x for x in coll.all_objects if x.type == "MESH" and x.name.split(".")[0] == "base")
    v = o.data.vertices[0]
    out["moved"] = {"object": o.name, "old": list(v.co)}
    v.co.z += 0.25
    o.data.update()
    sc.set_active_collection(bpy.context, coll)
    print("VERTEX_EDIT_EXPORT", flush=True)
    r = bpy.ops.export_scene.parkan_msh(filepath=os.path.join(WORK, "edited.msh"), mode="BASE",
                                        target="MSH", replace_file=True)
    print("VERTEX_EDIT_DONE", flush=True)
    check("FINISHED" in r, f"export edited.msh: {r}")
    for entry in ENTRIES:
        arch, name = entry.split(":", 1)
        for c in list(bpy.data.collections):
            bpy.data.collections.remove(c)
        for data in (bpy.data.objects, bpy.data.meshes, bpy.data.materials, bpy.data.actions):
            for x in list(data):
                data.remove(x)
        path = os.path.join(GAME, arch)
        r = bpy.ops.import_scene.parkan_msh(filepath=path, entry_name=name, fps=24.0,
                                            all_cells=True)
        coll = bpy.data.collections.get(os.path.splitext(name)[0])
        if not check("FINISHED" in r and coll is not None, f"import {entry}: {r}"):
            continue
        sc.set_active_collection(bpy.context, coll)
        target = os.path.join(WORK, name)
        r = bpy.ops.export_scene.parkan_msh(filepath=target, mode="BASE", target="MSH",
                                            replace_file=True)
        if not check("FINISHED" in r, f"export {entry}: {r}"):
            continue
        same = open(target, "rb").read() == nres_entry(path, name)
        out["split_models"][entry] = "identical" if same else "different"
        if entry != ENTRIES[0]:
            continue
        # 3. The first entry, whose vertices Blender splits, with vertex 0
        # of its first mesh object moved: the same kind of report as 1.
        o = sorted((x for x in coll.all_objects if x.type == "MESH" and len(x.data.vertices)),
                   key=lambda x: x.name)[0]
        o.data.vertices[0].co.z += 0.25
        o.data.update()
        out["split_moved"] = o.name
        print("SPLIT_EDIT_EXPORT", flush=True)
        r = bpy.ops.export_scene.parkan_msh(filepath=os.path.join(WORK, "split_edited.msh"),
                                            mode="BASE", target="MSH", replace_file=True)
        print("SPLIT_EDIT_DONE", flush=True)
        check("FINISHED" in r, f"export split_edited.msh: {r}")


harness.run("VERTEX_REPORT", main, out)
