"""A new map made in Blender through the add-on (issue 38; docs/modding.md
"Make a new level"):

    blender -b --factory-startup --python tests/blender/newmap_test.py -- \\
        ADDON.zip PALETTE_MAP_DIR WORK_DIR

File > New > Parkan map (8x8 squares of 2x2 quads, side 1600, the palette's
materials); sculpted by script (vertex z only: a hill, a valley, a
plateau); painted: L32 on the hill, L24 in the valley, an L02+L08
two-material patch, L02 elsewhere; File > Export > Parkan new map into
WORK/MAPS/mine; then re-imported with File > Import > Parkan model and
every grid node's height compared with what Blender showed. Then a face
deleted (a hole) and exported as WORK/MAPS/holed: refused, the message
kept. Prints `NEWMAP_TEST {json}`; run by tests/shared_blender_newmap.rs.
"""

import math
import os
import sys

import bpy

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402

ZIP, PALETTE, WORK = (os.path.abspath(a) for a in harness.args()[:3])
out = {"errors": []}
check = harness.checker(out)


def height(x, y):
    z = 10.0
    z += 60.0 * max(0.0, 1.0 - math.hypot(x - 400.0, y - 400.0) / 400.0)  # hill
    z -= 30.0 * max(0.0, 1.0 - math.hypot(x - 1200.0, y - 400.0) / 300.0)  # valley
    if 900.0 <= x <= 1400.0 and 900.0 <= y <= 1400.0:
        z = 45.0  # plateau
    return z


def paint(obj, n):
    names = [m.name for m in obj.data.materials]
    slot = {}
    for want in ("L02", "L32", "L24", "L02+L08"):
        hit = [k for k, nm in enumerate(names) if nm.split("#")[0].rsplit(".", 1)[0] == want]
        if not check(hit, f"no material {want} among {names}"):
            return
        slot[want] = hit[0]
    for p in obj.data.polygons:
        q = p.index // 2
        i, j = q // n, q % n
        if 2 <= i <= 5 and 2 <= j <= 5:
            p.material_index = slot["L32"]
        elif i == 6 and 2 <= j <= 5:
            p.material_index = slot["L02+L08"]
        elif 10 <= i <= 13 and 2 <= j <= 5:
            p.material_index = slot["L24"]
        else:
            p.material_index = slot["L02"]
    out["slots"] = slot


def export(name):
    try:
        r = bpy.ops.export_scene.parkan_new_map(name=name, directory=os.path.join(WORK, "MAPS"))
        return list(r), ""
    except RuntimeError as e:
        return ["ERROR"], str(e)


def main():
    os.makedirs(os.path.join(WORK, "MAPS"), exist_ok=True)
    out["blender"] = bpy.app.version_string
    if not harness.install_addon(ZIP, out):
        return
    r = bpy.ops.object.parkan_new_map(name="mine", squares="8", quads=2, side=1600.0, palette=PALETTE)
    if not check("FINISHED" in r, f"new map: {r}"):
        return
    obj = bpy.context.view_layer.objects.active
    out["materials"] = [m.name for m in obj.data.materials]
    out["vertices"] = len(obj.data.vertices)
    sculpt = bpy.context.scene.tool_settings.sculpt
    out["locked"] = bool(sculpt and sculpt.lock_x and sculpt.lock_y)
    for v in obj.data.vertices:
        v.co.z = height(v.co.x, v.co.y)
    obj.data.update()
    paint(obj, 16)
    shown = {(round(v.co.x, 3), round(v.co.y, 3)): v.co.z for v in obj.data.vertices}
    out["export"] = export("mine")
    # Re-import the written map and compare every node's height.
    before = set(bpy.data.objects)
    r = bpy.ops.import_scene.parkan_msh(filepath=os.path.join(WORK, "MAPS", "mine", "Land.msh"))
    check("FINISHED" in r, f"re-import: {r}")
    back = [o for o in bpy.data.objects if o not in before and o.type == "MESH"]
    seen, worst = set(), 0.0
    for o in back:
        for v in o.data.vertices:
            p = o.matrix_world @ v.co
            key = (round(p.x, 3), round(p.y, 3))
            if key not in shown:
                check(False, f"re-imported vertex at {tuple(p)} is no grid node")
                continue
            seen.add(key)
            worst = max(worst, abs(p.z - shown[key]))
    out["reimported_nodes"] = len(seen)
    out["max_dz"] = worst
    for o in back:
        bpy.data.objects.remove(o, do_unlink=True)
    # A hole: one face deleted.
    import bmesh
    bm = bmesh.new()
    bm.from_mesh(obj.data)
    bm.faces.ensure_lookup_table()
    bmesh.ops.delete(bm, geom=[bm.faces[40]], context="FACES_ONLY")
    bm.to_mesh(obj.data)
    bm.free()
    obj.data.update()
    bpy.context.view_layer.objects.active = obj
    out["holed"] = export("holed")
    out["holed_exists"] = os.path.exists(os.path.join(WORK, "MAPS", "holed"))


harness.run("NEWMAP_TEST", main, out)
