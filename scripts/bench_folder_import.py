"""Whole-folder import: the add-on against Blender's own glTF importer, side
by side in one run (issue 24 item 6).

    scripts/package_addon.sh --bin-dir target/release /tmp/addon.zip
    BLENDER_USER_SCRIPTS=$(mktemp -d) blender -b --factory-startup \\
        --python scripts/bench_folder_import.py -- /tmp/addon.zip GAME_DIR [--repeat N]

(PyPI bpy: `BPY_PYTHON scripts/bench_folder_import.py -- ...` with
BLENDER_USER_SCRIPTS set the same way.) GAME_DIR is a game folder (a copy
of `../shared/corpus` without `bad/`); it is not written to.

1. `msh2gltf GAME_DIR GLB_DIR` once (the add-on's binary), untimed: the GLBs
   Blender's importer reads.
2. *gltf*: an empty file, then `bpy.ops.import_scene.gltf` on every GLB,
   each into its own collection (what a user scripting Blender's importer
   does; nothing else).
3. *addon*: an empty file, then `bpy.ops.import_scene.parkan_msh` on the
   folder (conversion included: the add-on runs msh2gltf itself).

Each timed pass is repeated `--repeat` times (default 1) alternating the
two; the best time of each is kept. Prints one line per pass and
`BENCH_FOLDER {json}`: seconds (best and every pass), images, objects,
materials, collections, models of each, and `ratio` = addon / gltf.
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

import bpy

argv = sys.argv[sys.argv.index("--") + 1:] if "--" in sys.argv else sys.argv[1:]


def option(name, default):
    if name not in argv:
        return default
    i = argv.index(name)
    v = argv[i + 1]
    del argv[i:i + 2]
    return v


REPEAT = int(option("--repeat", 1))
ONLY = option("--only", "")  # gltf / addon: that pass only
PROFILE = option("--profile", "")  # cProfile the passes, print the top 40 by cumulative time
if len(argv) != 2:
    print(__doc__)
    sys.exit(2)
ZIP, GAME = os.path.abspath(argv[0]), os.path.abspath(argv[1])


def counts():
    return {"images": sum(1 for i in bpy.data.images if i.type == "IMAGE"),
            "objects": len(bpy.data.objects),
            "materials": len(bpy.data.materials), "collections": len(bpy.data.collections),
            "meshes": len(bpy.data.meshes)}


def empty():
    bpy.ops.wm.read_homefile(use_empty=True)
    if "msh" in bpy.context.scene.keys():
        del bpy.context.scene["msh"]
    for block in (bpy.data.images, bpy.data.materials, bpy.data.meshes, bpy.data.objects):
        for d in list(block):
            block.remove(d)


def gltf_pass(glbs):
    empty()
    root = bpy.context.scene.collection
    t = time.perf_counter()
    for g in glbs:
        c = bpy.data.collections.new(os.path.splitext(os.path.basename(g))[0])
        root.children.link(c)
        bpy.context.view_layer.active_layer_collection = \
            bpy.context.view_layer.layer_collection.children[c.name]
        bpy.ops.import_scene.gltf(filepath=g)
    return time.perf_counter() - t, dict(counts(), models=len(glbs))


def addon_pass():
    empty()
    t = time.perf_counter()
    r = bpy.ops.import_scene.parkan_msh(filepath=os.path.join(GAME, "x.rlb"), whole_folder=True)
    dt = time.perf_counter() - t
    models = sum(1 for c in bpy.data.collections if "msh" in c.keys())
    return dt, dict(counts(), models=models, result=sorted(r))


def main():
    bpy.ops.preferences.addon_install(filepath=ZIP, overwrite=True)
    bpy.ops.preferences.addon_enable(module="io_scene_parkan")
    from io_scene_parkan import tools
    m2g = tools.find_binary("msh2gltf", "")
    out_dir = tempfile.mkdtemp(prefix="bench_folder_")
    glb_dir = os.path.join(out_dir, "glb")
    subprocess.run([m2g, GAME, glb_dir, "-q", "--fps", "24.0"], check=True)
    glbs = sorted(os.path.join(d, f) for d, _, fs in os.walk(glb_dir) for f in fs if f.endswith(".glb"))
    res = {"blender": bpy.app.version_string, "glbs": len(glbs), "gltf": [], "addon": []}
    prof = None
    if PROFILE:
        import cProfile
        prof = cProfile.Profile()
        prof.enable()
    for i in range(REPEAT):
        for name in ("gltf", "addon"):
            if ONLY and name != ONLY:
                continue
            dt, c = gltf_pass(glbs) if name == "gltf" else addon_pass()
            res[name].append(round(dt, 2))
            res[name + "_counts"] = c
            print(f"pass {i} {name:5} {dt:7.2f} s {c}", flush=True)
    if prof is not None:
        import pstats
        prof.disable()
        pstats.Stats(prof).sort_stats("cumulative").print_stats(40)
    if res["gltf"] and res["addon"]:
        res["gltf_best"], res["addon_best"] = min(res["gltf"]), min(res["addon"])
        res["ratio"] = round(res["addon_best"] / res["gltf_best"], 3)
    print("BENCH_FOLDER " + json.dumps(res), flush=True)
    shutil.rmtree(out_dir, ignore_errors=True)


main()
