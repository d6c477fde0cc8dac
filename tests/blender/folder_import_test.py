"""Imports a whole game folder through the io_scene_parkan add-on (File ›
Import › Parkan model, Whole folder) and reports what Blender holds: the
models, the bounds of each laid-out group (archive) collection, where the
maps went, the images and each model's material textures; then exports
two laid-out models unedited (mode "Edit of the imported model", bare
.msh) so the caller can check they kept their bytes (issue 24 item 6).

    BLENDER_USER_SCRIPTS=TMP/scripts BLENDER_USER_CONFIG=TMP/config \\
    blender -b --factory-startup --python tests/blender/folder_import_test.py -- \\
        ADDON.zip GAME_DIR WORK_DIR ENTRY...

ENTRY: `archive.rlb:NAME.msh` of a model to export (as WORK_DIR/NAME.msh).
Run by tests/shared_blender_folder_import.rs. Prints one line
`FOLDER_IMPORT_TEST {json}` (`errors` lists what failed on the Blender side).
"""

import os
import sys
import time

import bpy

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402

argv = harness.args()
ZIP, GAME, WORK = (os.path.abspath(a) for a in argv[:3])
ENTRIES = argv[3:]
out = {"errors": []}


def xy_bounds(objects):
    from io_scene_parkan import layout
    b = layout.bounds(objects)
    return None if b is None else [b[0].x, b[0].y, b[1].x, b[1].y]


def path_of(coll, parents):
    names = []
    while coll is not None:
        names.append(coll.get("parkan_dir", coll.name))
        coll = parents.get(coll.name)
    return "/".join(reversed(names))


def materials_of(coll):
    """{Blender material name: sorted library names of its images} of a model."""
    from io_scene_parkan import images
    res = {}
    for o in coll.all_objects:
        for s in getattr(o, "material_slots", []):
            m = s.material
            if m is None or not m.use_nodes:
                continue
            names = res.setdefault(m.name, set())
            for n in m.node_tree.nodes:
                if n.type == "TEX_IMAGE":
                    names.add(images.library_name(n.image.name) if n.image else "<none>")
    return {k: sorted(v) for k, v in res.items()}


def report_missions(parents):
    """The missions (collections with the mission record) and the XY
    bounds of every map and mission, as laid out."""
    from io_scene_parkan import missions
    found, spots = [], {}
    for c in bpy.data.collections:
        if missions.RECORD in c.keys():
            found.append({"source": str(c[missions.RECORD]["source"]),
                          "path": path_of(c, parents), "name": c.name,
                          "laid_out": "parkan_layout" in c.keys(),
                          "groups": sorted(ch.get("parkan_group", ch.name) for ch in c.children),
                          "placed": sum(1 for o in c.all_objects if missions.props(o))})
            spots[path_of(c, parents)] = xy_bounds(list(c.all_objects))
        elif "msh" in c.keys() and c["msh"].get("terrain"):
            spots[path_of(c, parents)] = xy_bounds(list(c.all_objects))
    out["missions"] = found
    out["spots"] = spots


def report_folder():
    parents = {ch.name: c for c in bpy.data.collections for ch in c.children}
    report_missions(parents)
    models, groups = [], {}
    for c in bpy.data.collections:
        if "msh" not in c.keys():
            continue
        parent = parents.get(c.name)
        models.append({"source": str(c["msh"].get("source", "")), "path": path_of(c, parents),
                       "laid_out": "parkan_layout" in c.keys(),
                       "materials": materials_of(c)})
        if "parkan_layout" in c.keys() and parent is not None:
            groups.setdefault(parent.name, (parent, []))[1].append(c)
    from io_scene_parkan import missions
    for c in bpy.data.collections:
        parent = parents.get(c.name)
        if missions.RECORD in c.keys() and "parkan_layout" in c.keys() and parent is not None:
            groups.setdefault(parent.name, (parent, []))[1].append(c)
    out["models"] = models
    out["groups"] = {path_of(p, parents): xy_bounds([o for c in cs for o in c.all_objects])
                     for p, cs in groups.values()}
    out["images"] = sorted(i.name for i in bpy.data.images if i.type == "IMAGE")
    out["objects"] = len(bpy.data.objects)
    out["materials"] = len(bpy.data.materials)


def export(entry):
    """Exports the model of `entry` unedited, its collection made active."""
    from io_scene_parkan import scene as sc
    coll = next(c for c in bpy.data.collections
                if "msh" in c.keys() and str(c["msh"].get("source", "")).endswith(entry))
    sc.set_active_collection(bpy.context, coll)
    name = entry.rpartition(":")[2]
    try:
        r = bpy.ops.export_scene.parkan_msh(filepath=os.path.join(WORK, name), mode="BASE",
                                            target="MSH")
        out.setdefault("exports", {})[entry] = list(r)
    except RuntimeError as e:
        out["errors"].append(f"export {entry}: {e}")


def export_mission():
    """The first mission exported unedited (File › Export › Parkan mission)."""
    from io_scene_parkan import missions, scene as sc
    coll = next((c for c in sorted(bpy.data.collections, key=lambda c: c.name)
                 if missions.RECORD in c.keys()), None)
    if coll is None:
        out["errors"].append("no mission collection to export")
        return
    sc.set_active_collection(bpy.context, coll)
    path = os.path.join(WORK, "mission_data.tma")
    try:
        r = bpy.ops.export_scene.parkan_mission(filepath=path)
        out["mission_export"] = {"result": list(r), "source": str(coll[missions.RECORD]["source"]),
                                 "path": path}
    except RuntimeError as e:
        out["errors"].append(f"mission export: {e}")


def main():
    os.makedirs(WORK, exist_ok=True)
    out["blender"] = bpy.app.version_string
    harness.install_addon(ZIP, out)
    first = sorted(f for f in os.listdir(GAME) if f.lower().endswith(".rlb"))[0]
    t = time.perf_counter()
    r = bpy.ops.import_scene.parkan_msh(filepath=os.path.join(GAME, first), whole_folder=True,
                                        fps=24.0)
    out["seconds"] = round(time.perf_counter() - t, 2)
    out["import"] = list(r)
    report_folder()
    for e in ENTRIES:
        export(e)
    export_mission()
    # The grid offsets are back after the exports.
    out["laid_out_after_export"] = sum(
        1 for c in bpy.data.collections if "parkan_layout" in c.keys()
        and any(o.delta_location.length > 0 for o in c.all_objects if o.parent is None))


harness.run("FOLDER_IMPORT_TEST", main, out)
sys.stdout.flush()
