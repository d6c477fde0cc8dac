"""Missions through the io_scene_parkan add-on in headless Blender.

    BLENDER_USER_SCRIPTS=TMP/scripts BLENDER_USER_CONFIG=TMP/config \\
    blender -b --factory-startup --python tests/blender/mission_test.py -- \\
        ADDON.zip WORK_DIR MISSION_DIR...

Run by tests/shared_blender_missions.rs on a copy of the corpus. Installs
the add-on and imports every MISSION_DIR (File > Import > Parkan mission,
the folder for the first, its data.tma for the others) into one Blender
scene; for each, counts the placed objects per kind, the mesh objects and
the mesh datablocks under placed objects, the clan colours, and exports it
unedited (File > Export > Parkan mission) to WORK_DIR/<i>/unedited.tma;
File > Export > Parkan model with the mission active is refused, naming
the mission export.
Then in the first mission it moves the first rock by (+5, +2.5, 0) in
Blender (= game x, y), deletes the first vegetation (with its model's
pieces, as Delete Hierarchy does), duplicates the first unit without a host
(bpy.ops.object.duplicate, Shift+D: `.001`) and moves the copy by +10 along
Blender y (game y), and exports to WORK_DIR/0/edited.tma. In the second
mission, whose names collided with the first's on import (`.001`), it
duplicates a unit so named (the copy: `.002`, no longer than the original),
renames the copy `.000` (sorting before the original) and exports to WORK_DIR/1/edited.tma.
Back in the first mission it scales the first building (kind 0) by 2 and
moves the first route by +3 along Blender x (written), adds a new mesh object to
the mission collection, moves a piece of the first unit +1 along z inside
its model and a vertex of the first tree's mesh, edits the game does not take (mission-notes §5.3,
§8.6), and exports to WORK_DIR/0/warned.tma: the test
reads the add-on's warnings from Blender's output. Renders the first
mission from above (Workbench, object colours) to WORK_DIR/mission.png.
Prints one line `MISSION_TEST {json}`.
"""

import os
import sys

import bpy

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
import mathutils

argv = harness.args()
ZIP, WORK, MISSIONS = os.path.abspath(argv[0]), os.path.abspath(argv[1]), argv[2:]
out = {"errors": [], "missions": []}


def messages(fn):
    """Runs an operator call; returns (result, the reports it printed are in
    stdout, so only the result)."""
    try:
        return list(fn())
    except RuntimeError as e:  # an ERROR report raises in background mode
        return ["ERROR", str(e)]


def describe(coll, missions):
    placed = [o for o in coll.all_objects if missions.props(o)]
    kinds, clans, colours = {}, {}, {}
    for o in placed:
        x = missions.props(o)
        kinds[str(x["kind"])] = kinds.get(str(x["kind"]), 0) + 1
        clans[str(x["clan"])] = clans.get(str(x["clan"]), 0) + 1
        colours[tuple(round(c, 3) for c in o.color)] = 1
    under = [d for o in placed for d in missions.descendants(o) if d.type == "MESH"]
    groups = sorted(c.get("parkan_group", c.name) for c in coll.children)
    wrong_colour = [o.name for o in placed for d in missions.descendants(o)
                    if max(abs(a - b) for a, b in
                           zip(d.color, missions.clan_colour(missions.props(o)["clan"]))) > 1e-6]
    return {"collection": coll.name, "placed": len(placed), "kinds": kinds, "clans": clans,
            "colours": len(colours), "wrong_colour": wrong_colour,
            "indices": sorted(missions.props(o)["index"] for o in placed),
            "mesh_objects": len(under), "meshes": len({d.data.name for d in under}),
            "groups": groups, "source": coll[missions.RECORD]["source"]}


def export(missions, coll, path):
    from io_scene_parkan import scene as sc
    sc.set_active_collection(bpy.context, coll)
    return messages(lambda: bpy.ops.export_scene.parkan_mission(filepath=path))


def first(placed, missions, test):
    return next(o for o in sorted(placed, key=lambda o: missions.props(o)["index"])
                if test(missions.props(o)))


def edit(missions, coll):
    placed = [o for o in coll.all_objects if missions.props(o)]
    rock = first(placed, missions, lambda x: x["kind"] == 3)
    rock.matrix_world.translation += mathutils.Vector((5.0, 2.5, 0.0))
    tree = first(placed, missions, lambda x: x["kind"] == 2)
    unit = first(placed, missions, lambda x: x["kind"] == 1 and x["host"] == -1)
    e = {"moved": missions.props(rock)["index"], "deleted": missions.props(tree)["index"],
         "copied": missions.props(unit)["index"]}
    for o in reversed(missions.descendants(tree)):
        bpy.data.objects.remove(o)
    e.update(duplicate(missions, unit))
    return e


def duplicate(missions, unit):
    """Shift+D of `unit` with its pieces; the copy moved +10 along y."""
    e = {"original_name": unit.name}
    bpy.ops.object.select_all(action="DESELECT")
    for d in missions.descendants(unit):
        d.select_set(True)
    bpy.context.view_layer.objects.active = unit
    before = set(bpy.data.objects)
    e["duplicate_result"] = messages(lambda: bpy.ops.object.duplicate())
    new = [o for o in bpy.data.objects if o not in before]
    copy = [o for o in new if missions.props(o)]
    e["copy_names"] = [o.name for o in copy]
    e["copy_objects"] = len(new)
    if copy:
        copy[0].matrix_world.translation += mathutils.Vector((0.0, 10.0, 0.0))
    bpy.context.view_layer.update()
    return e


def unwritable(missions, coll):
    """A building scaled by 2, a route moved +3 along x (written: its
    points follow the mesh, issue 36 item 6) and a new mesh object, a piece
    moved and a mesh edited: none but the route is written (the game
    ignores a building's scale; data.tma places game models only), so each
    must be a warning naming the object."""
    placed = [o for o in coll.all_objects if missions.props(o)]
    building = first(placed, missions, lambda x: x["kind"] == 0)
    building.scale = building.scale * 2.0
    route = next(o for o in sorted(coll.all_objects, key=lambda o: o.name)
                 if missions.props(o, "parkan_route"))
    route.matrix_world.translation += mathutils.Vector((3.0, 0.0, 0.0))
    # A new mesh added to the mission (no placed object behind it).
    mesh = bpy.data.meshes.new("NewRock")
    mesh.from_pydata([(0, 0, 0), (4, 0, 0), (0, 4, 0)], [], [(0, 1, 2)])
    added = bpy.data.objects.new("NewRock", mesh)
    coll.objects.link(added)
    added.location = route.matrix_world.translation
    # A piece of a unit moved inside its model, and a vertex of a tree's
    # mesh moved: data.tma holds neither.
    unit = first(placed, missions, lambda x: x["kind"] == 1)
    piece = next(d for d in missions.descendants(unit)[1:])
    piece.location.z += 1.0
    tree = first(placed, missions, lambda x: x["kind"] == 2)
    shape = next(d for d in missions.descendants(tree) if d.type == "MESH")
    shape.data.vertices[0].co.z += 0.5
    bpy.context.view_layer.update()
    return {"scaled": building.name, "scaled_index": missions.props(building)["index"],
            "route": route.name, "route_index": missions.props(route, "parkan_route")["index"],
            "added": added.name, "piece": piece.name, "mesh": shape.data.name}


def copy_renamed(missions, coll):
    """In a mission whose names collided on import (`U13 w_m_trk2.001`):
    Shift+D of such a unit gives a copy whose name is no longer (`.002`);
    renamed `U13 w_m_trk2.000` it also sorts before the original."""
    placed = [o for o in coll.all_objects if missions.props(o)]
    unit = next((o for o in sorted(placed, key=lambda o: missions.props(o)["index"])
                 if missions.props(o)["kind"] == 1 and missions.props(o)["host"] == -1
                 and "." in o.name), None)
    if unit is None:
        return {"skipped": "no unit with a .NNN name"}
    e = {"copied": missions.props(unit)["index"]}
    e.update(duplicate(missions, unit))
    # The user renames the copy: as long as the original's, sorting first.
    copy = bpy.data.objects.get(e["copy_names"][0]) if e["copy_names"] else None
    if copy is not None:
        copy.name = unit.name.rsplit(".", 1)[0] + ".000"
        e["copy_names"] = [copy.name]
    return e


def render(coll, missions, path):
    """Workbench, orthographic from above, framing the placed objects."""
    scene = bpy.context.scene
    pts = [o.matrix_world.translation for o in coll.all_objects if missions.props(o)]
    lo = [min(p[i] for p in pts) for i in range(3)]
    hi = [max(p[i] for p in pts) for i in range(3)]
    cam_data = bpy.data.cameras.new("mission_cam")
    cam_data.type = "ORTHO"
    cam_data.ortho_scale = max(hi[0] - lo[0], hi[1] - lo[1]) * 1.15 + 40.0
    cam_data.clip_end = 5000.0
    cam = bpy.data.objects.new("mission_cam", cam_data)
    scene.collection.objects.link(cam)
    import math
    height = hi[2] + 600.0
    back = (height - (lo[2] + hi[2]) / 2) * math.tan(0.35)
    cam.location = ((lo[0] + hi[0]) / 2, (lo[1] + hi[1]) / 2 - back, height)
    cam.rotation_euler = (0.35, 0.0, 0.0)
    scene.camera = cam
    scene.render.engine = "BLENDER_WORKBENCH"
    scene.display.shading.light = "STUDIO"
    scene.display.shading.color_type = "OBJECT"
    scene.render.resolution_x = scene.render.resolution_y = 900
    scene.render.filepath = path
    bpy.ops.render.render(write_still=True)


def main():
    os.makedirs(WORK, exist_ok=True)
    out["blender"] = bpy.app.version_string
    harness.install_addon(ZIP, out)
    from io_scene_parkan import missions, scene as sc
    top = bpy.context.scene.collection
    colls = []
    for i, m in enumerate(MISSIONS):
        sc.set_active_collection(bpy.context, top)
        before = set(bpy.data.collections)
        path = m if i == 0 else os.path.join(m, "data.tma")
        r = messages(lambda: bpy.ops.import_scene.parkan_mission(filepath=path))
        new = [c for c in bpy.data.collections if c not in before and missions.RECORD in c.keys()]
        if not new:
            out["errors"].append(f"{m}: import gave no mission collection ({r})")
            return
        colls.append(new[0])
        d = describe(new[0], missions)
        d["import_result"] = r
        out["missions"].append(d)
    out["scene_keeps_mission_extras"] = "parkan_mission" in bpy.context.scene.keys()
    for i, coll in enumerate(colls):
        os.makedirs(os.path.join(WORK, str(i)), exist_ok=True)
        out["missions"][i]["unedited_result"] = export(
            missions, coll, os.path.join(WORK, str(i), "unedited.tma"))
    # File > Export > Parkan model with a mission active points to the mission export.
    sc.set_active_collection(bpy.context, colls[0])
    out["model_export_result"] = messages(lambda: bpy.ops.export_scene.parkan_msh(
        filepath=os.path.join(WORK, "model.msh"), mode="BASE"))
    out["edit"] = edit(missions, colls[0])
    out["edited_result"] = export(missions, colls[0], os.path.join(WORK, "0", "edited.tma"))
    out["unwritable"] = unwritable(missions, colls[0])
    out["unwritable"]["result"] = export(missions, colls[0], os.path.join(WORK, "0", "warned.tma"))
    if len(colls) > 1:
        out["edit_renamed"] = copy_renamed(missions, colls[1])
        out["edit_renamed"]["result"] = export(missions, colls[1],
                                               os.path.join(WORK, "1", "edited.tma"))
    render(colls[0], missions, os.path.join(WORK, "mission.png"))


harness.run("MISSION_TEST", main, out)
sys.stdout.flush()
