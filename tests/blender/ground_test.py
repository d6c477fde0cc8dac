"""Heights on the ground (mission-notes §5.4, issue 37 item 2) through the
io_scene_parkan add-on in headless Blender.

    blender -b --factory-startup --python tests/blender/ground_test.py -- \\
        ADDON.zip WORK_DIR MISSION_DIR B_INDEX BX BY U_INDEX UX UY

Run by tests/shared_blender_ground.rs on a copy of the corpus. Imports
MISSION_DIR (File > Import > Parkan mission), moves the placed building of
index B_INDEX to game (BX, BY) and the unit U_INDEX to (UX, UY), each
keeping its z (Blender x, y = game x, y), then:
1. exports (File > Export > Parkan mission) to WORK_DIR/warned.tma: the
   heights are written as they are, and the add-on's report names each
   object left off the ground (read from stdout by the test);
2. exports with "Set moved objects on the ground" to WORK_DIR/dropped.tma;
3. selects the building (by a piece of its model) and the unit, runs
   Object > Drop to ground (Parkan) and records their new z; undoes it
   (Ctrl+Z) and records the z back; runs it again and exports without the
   option to WORK_DIR/after_drop.tma.
Prints one line `GROUND_TEST {json}`.
"""

import os
import sys

import bpy

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402

argv = harness.args()
ZIP, WORK, MISSION = os.path.abspath(argv[0]), os.path.abspath(argv[1]), argv[2]
B_INDEX, BX, BY = int(argv[3]), float(argv[4]), float(argv[5])
U_INDEX, UX, UY = int(argv[6]), float(argv[7]), float(argv[8])
out = {"errors": []}


def messages(fn):
    try:
        return list(fn())
    except RuntimeError as e:  # an ERROR report raises in background mode
        return ["ERROR", str(e)]


def export(coll, path, **kw):
    from io_scene_parkan import scene as sc
    sc.set_active_collection(bpy.context, coll)
    return messages(lambda: bpy.ops.export_scene.parkan_mission(filepath=path, **kw))


def z_of(o):
    return o.matrix_world.translation.z


def main():
    os.makedirs(WORK, exist_ok=True)
    out["blender"] = bpy.app.version_string
    harness.install_addon(ZIP, out)
    from io_scene_parkan import missions
    r = messages(lambda: bpy.ops.import_scene.parkan_mission(filepath=MISSION))
    colls = [c for c in bpy.data.collections if missions.RECORD in c.keys()]
    if not colls:
        out["errors"].append(f"import gave no mission collection ({r})")
        return
    coll = colls[0]
    placed = {missions.props(o)["index"]: o for o in coll.all_objects if missions.props(o)}
    b, u = placed[B_INDEX], placed[U_INDEX]
    out["names"] = [b.name, u.name]
    out["z_imported"] = [z_of(b), z_of(u)]
    for o, (x, y) in ((b, (BX, BY)), (u, (UX, UY))):
        m = o.matrix_world.copy()
        m.translation.x, m.translation.y = x, y
        o.matrix_world = m
    bpy.context.view_layer.update()
    out["warned_result"] = export(coll, os.path.join(WORK, "warned.tma"))
    out["dropped_result"] = export(coll, os.path.join(WORK, "dropped.tma"), drop_to_ground=True)
    # Drop to ground on the selection: the building through a piece of it.
    piece = next((d for d in missions.descendants(b)[1:] if d.type == "MESH"), b)
    bpy.ops.object.select_all(action="DESELECT")
    piece.select_set(True)
    u.select_set(True)
    bpy.context.view_layer.objects.active = u
    out["undo_push"] = messages(lambda: bpy.ops.ed.undo_push(message="before drop"))
    out["drop_result"] = messages(lambda: bpy.ops.object.parkan_drop_to_ground())
    out["z_dropped"] = [z_of(b), z_of(u)]
    out["undo_result"] = messages(lambda: bpy.ops.ed.undo())
    # Undo replaces the objects: look them up again by name.
    b, u = bpy.data.objects[out["names"][0]], bpy.data.objects[out["names"][1]]
    out["z_undone"] = [z_of(b), z_of(u)]
    bpy.ops.object.select_all(action="DESELECT")
    b.select_set(True)
    u.select_set(True)
    bpy.context.view_layer.objects.active = u
    out["drop_again_result"] = messages(lambda: bpy.ops.object.parkan_drop_to_ground())
    out["z_dropped_again"] = [z_of(b), z_of(u)]
    coll = [c for c in bpy.data.collections if missions.RECORD in c.keys()][0]
    out["after_drop_result"] = export(coll, os.path.join(WORK, "after_drop.tma"))


harness.run("GROUND_TEST", main, out)
sys.stdout.flush()
