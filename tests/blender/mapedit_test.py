"""A map's heights and paint edited in Blender and exported through the
add-on (docs/modding.md "Edit a map's heights and paint"):

    blender -b --factory-startup --python tests/blender/mapedit_test.py -- \\
        ADDON.zip MAP_DIR WORK_DIR

Installs the add-on, imports MAP_DIR/Land.msh with File > Import > Parkan
model, then with File > Export > Parkan model (mode "Edit of the imported
model"):
  repaint/Land.msh  six LOD0 faces of a one-material class A given the
                    material slot of a two-material class A+B (the same
                    first material): "6 faces repainted", the patch border
                    vertices split by gltf2msh;
  hill/Land.msh     then a round hill raised by script (every vertex within
                    120 units of the map's middle moved up along Blender z,
                    30 units at the top, a cosine): Land.map written beside
                    it, its areal vertices on the new ground;
  install           the same scene with Install into the game: MAP_DIR's own
                    Land.msh and Land.map replaced (gltf2msh --in-place).
Prints one line `MAPEDIT_TEST {json}`: `errors`, each step's result and the
add-on's report lines (`io_scene_parkan.reports.history`); run by
tests/shared_blender_mapedit.rs in Blender 3.4.1 and the newest bpy.
"""

import math
import os
import sys

import bpy

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402

ZIP, MAP, WORK = (os.path.abspath(a) for a in harness.args()[:3])
out = {"errors": [], "results": {}, "reports": {}}
check = harness.checker(out)


def step(name, fn):
    """Runs operator call `fn` as step `name`: its result and the report
    lines it made (ERROR: the exception's text)."""
    from io_scene_parkan.reports import history
    n = len(history)
    try:
        res = list(fn())
    except RuntimeError as e:
        res = ["ERROR", str(e)]
    out["results"][name] = res
    out["reports"][name] = [list(x) for x in history[n:]]
    return res


def export(name, coll, **kw):
    from io_scene_parkan import scene as sc
    sc.set_active_collection(bpy.context, coll)
    path = os.path.join(WORK, name, "Land.msh")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    return step(name, lambda: bpy.ops.export_scene.parkan_msh(filepath=path, mode="BASE", **kw))


def terrain_ext(mat):
    """The material's parkan_terrain extras (a custom property), or {}."""
    t = mat.get("parkan_terrain") if mat is not None else None
    try:
        return {k: t[k] for k in t.keys()} if t is not None else {}
    except (AttributeError, TypeError):
        return {}


def repaint(meshes):
    """Six faces of class A given the A+B slot (same first material)."""
    for o in meshes:
        mats = list(o.data.materials)
        ext = [terrain_ext(m) for m in mats]
        for k, e in enumerate(ext):
            if e.get("tex2", 255) == 255 or e.get("flags") != 0x604:
                continue
            a = next((i for i, x in enumerate(ext) if x.get("tex1") == e.get("tex1")
                      and x.get("tex2") == 255 and x.get("flags") == 0x600), None)
            if a is None:
                continue
            faces = [p for p in o.data.polygons if p.material_index == a][:6]
            if len(faces) < 6:
                continue
            for p in faces:
                p.material_index = k
            o.data.update()
            out["repainted"] = {"object": o.name, "from": mats[a].name, "to": mats[k].name,
                                "faces": len(faces)}
            return True
    return False


def raise_hill(meshes, radius=120.0, height=30.0):
    pts = [o.matrix_world @ v.co for o in meshes for v in o.data.vertices]
    cx = (min(p.x for p in pts) + max(p.x for p in pts)) / 2
    cy = (min(p.y for p in pts) + max(p.y for p in pts)) / 2
    n = 0
    for o in meshes:
        inv = o.matrix_world.inverted()
        for v in o.data.vertices:
            p = o.matrix_world @ v.co
            d = math.hypot(p.x - cx, p.y - cy)
            if d < radius:
                p.z += height * 0.5 * (1.0 + math.cos(math.pi * d / radius))
                v.co = inv @ p
                n += 1
        o.data.update()
    out["hill"] = {"centre": [cx, cy], "vertices": n}


def main():
    os.makedirs(WORK, exist_ok=True)
    out["blender"] = bpy.app.version_string
    if not harness.install_addon(ZIP, out):
        return
    land = os.path.join(MAP, "Land.msh")
    if not check("FINISHED" in step("import", lambda: bpy.ops.import_scene.parkan_msh(
            filepath=land)), f"import {land}: {out['reports']}"):
        return
    coll = next((c for c in bpy.data.collections if "msh" in c.keys()
                 and c["msh"].get("terrain")), None)
    if not check(coll is not None, "no map collection"):
        return
    meshes = sorted((o for o in coll.all_objects if o.type == "MESH"), key=lambda o: o.name)
    if not check(repaint(meshes), "no one-material class with an A+B slot of the same first"):
        return
    export("repaint", coll)
    raise_hill(meshes)
    export("hill", coll)
    export("install", coll, install=True)


harness.run("MAPEDIT_TEST", main, out)
