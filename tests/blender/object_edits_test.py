"""Object-level edits through the io_scene_parkan add-on (issue 24).

    BLENDER_USER_SCRIPTS=TMP/scripts BLENDER_USER_CONFIG=TMP/config \\
    blender -b --factory-startup --python tests/blender/object_edits_test.py -- \\
        ADDON.zip ARCHIVE ENTRY WORK_DIR

Run by tests/shared_blender_object_edits.rs, which checks the written
models with the project's own decoder and the operator's reports (Blender
prints them on stdout as `Warning: TEXT`). Steps: install and enable the
add-on; import ENTRY through File > Import; export it through File > Export
(mode "Edit of the imported model"):
  unedited.msh  as imported;
  scaled.msh    every root object scaled x1.5 in Object mode;
  moved.msh     an animated object moved +0.25 along x without a key;
  turned.msh    the same object turned 30 degrees about x without a key;
  halfkey.msh   a location key inserted at frame 2.5 (between whole frames);
  point.msh     a control-point empty moved +0.1 along z.
Prints one line `OBJECT_EDITS {json}` (`errors` lists what failed).
"""

import os
import sys

import bpy

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402

argv = harness.args()
ZIP, ARCHIVE, ENTRY, WORK = (os.path.abspath(argv[0]), os.path.abspath(argv[1]), argv[2],
                            os.path.abspath(argv[3]))
out = {"errors": [], "exports": {}}


check = harness.checker(out)


def export(ctx, coll, name):
    """The add-on's export of the model's collection to WORK/name."""
    from io_scene_parkan import scene as sc
    sc.set_active_collection(ctx, coll)
    try:
        r = bpy.ops.export_scene.parkan_msh(filepath=os.path.join(WORK, name), mode="BASE")
        out["exports"][name] = list(r)
    except RuntimeError as e:
        out["exports"][name] = ["ERROR", str(e)]


def msh_prop(o):
    from io_scene_parkan import scene as sc
    return sc.idprop_dict(o["msh"]) if "msh" in o.keys() else {}


def main():
    os.makedirs(WORK, exist_ok=True)
    out["blender"] = bpy.app.version_string
    harness.install_addon(ZIP, out)
    ctx = bpy.context
    r = bpy.ops.import_scene.parkan_msh(filepath=ARCHIVE, entry_name=ENTRY, fps=24.0)
    check("FINISHED" in r, f"import: {r}")
    stem = os.path.splitext(ENTRY)[0]
    coll = bpy.data.collections.get(stem)
    if not check(coll is not None, f"no collection {stem}"):
        return
    scene = ctx.scene
    objs = sorted(coll.all_objects, key=lambda o: o.name)
    points = [o for o in objs if "control_point" in msh_prop(o)]
    nodes = [o for o in objs if o not in points]
    out["frame_current"] = scene.frame_current

    export(ctx, coll, "unedited.msh")

    # Object mode scale of every root (the whole model x1.5).
    roots = [o for o in nodes if o.parent is None]
    out["scaled_roots"] = [o.name for o in roots]
    for o in roots:
        o.scale = [1.5 * s for s in o.scale]
    export(ctx, coll, "scaled.msh")
    for o in roots:
        o.scale = [s / 1.5 for s in o.scale]

    # An animated object moved without a key (at the current frame).
    animated = [o for o in nodes if o.animation_data and o.animation_data.action]
    if check(animated, "no animated object"):
        o = animated[0]
        o.location.x += 0.25
        out["moved"] = {"object": o.name, "node": msh_prop(o).get("node")}
        export(ctx, coll, "moved.msh")
        # The scene keeps the move (now in the keys, issue 39): moved back
        # without a key, which the next export writes with its own edit.
        o.location.x -= 0.25

        # The same object turned 30 degrees about its parent's x without a key.
        import math
        import mathutils
        turn = mathutils.Quaternion((1.0, 0.0, 0.0), math.radians(30.0))
        o.rotation_quaternion = turn @ o.rotation_quaternion
        out["turned"] = {"object": o.name, "node": msh_prop(o).get("node"), "axis": [1, 0, 0],
                         "degrees": 30.0}
        export(ctx, coll, "turned.msh")
        o.rotation_quaternion = turn.inverted() @ o.rotation_quaternion

        # A key between whole frames: its warning text reaches the report.
        o = animated[-1]
        o.location.z += 0.1
        o.keyframe_insert(data_path="location", frame=2.5)
        scene.frame_set(scene.frame_current)  # as after dragging a key in the Graph Editor
        out["halfkey"] = {"object": o.name, "node": msh_prop(o).get("node")}
        export(ctx, coll, "halfkey.msh")
        from io_scene_parkan import edits
        for fc in edits.action_fcurves(o):
            if fc.data_path == "location":
                for k in [k for k in fc.keyframe_points if abs(k.co.x - 2.5) < 1e-6]:
                    fc.keyframe_points.remove(k)
        scene.frame_set(scene.frame_current)

    # A control point moved: named in a warning.
    if points:
        p = points[0]
        p.location.z += 0.1
        out["point"] = {"object": p.name, "name": msh_prop(p)["control_point"].get("name")}
        export(ctx, coll, "point.msh")


harness.run("OBJECT_EDITS", main, out)
