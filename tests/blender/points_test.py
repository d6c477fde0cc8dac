"""Control points through the io_scene_parkan add-on in headless Blender.

    BLENDER_USER_SCRIPTS=TMP/scripts BLENDER_USER_CONFIG=TMP/config \\
    blender -b --factory-startup --python tests/blender/points_test.py -- \\
        ADDON.zip ARCHIVE ENTRY POINT WORK_DIR

Run by tests/shared_blender_points.rs. Installs the add-on, imports ENTRY of
ARCHIVE through File > Import, exports it unedited as an archive copy
(WORK_DIR/unedited.rlb), then moves the control-point empty POINT by
(+0.5, 0, +0.25) in its parent's frame (Blender local axes = game axes),
turns it 90 degrees about its parent's z, and exports again
(WORK_DIR/edited.rlb), then once more with *Install into the game* (the
edit goes into ARCHIVE itself, in place). Prints one line `POINTS_TEST {json}` with what it
did, the operators' results and the messages they reported.
"""

import math
import os
import sys

import bpy

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
import mathutils

argv = harness.args()
ZIP, ARCHIVE, ENTRY, POINT, WORK = (os.path.abspath(argv[0]), os.path.abspath(argv[1]), argv[2],
                                    argv[3], os.path.abspath(argv[4]))
out = {"errors": []}


def main():
    os.makedirs(WORK, exist_ok=True)
    out["blender"] = bpy.app.version_string
    harness.install_addon(ZIP, out)
    from io_scene_parkan import scene as sc, tools
    import io_scene_parkan as addon
    listed = tools.list_models(addon.binary(bpy.context, "msh2gltf"), ARCHIVE)["models"]
    ident = [f"E{m['index']}" for m in listed if m["name"] == ENTRY][0]
    r = bpy.ops.import_scene.parkan_msh(filepath=ARCHIVE, entry=ident, fps=24.0)
    out["import_result"] = list(r)
    coll = bpy.data.collections[os.path.splitext(ENTRY)[0]]
    sc.set_active_collection(bpy.context, coll)
    r = bpy.ops.export_scene.parkan_msh(filepath=os.path.join(WORK, "unedited.rlb"), mode="BASE",
                                        target="ARCHIVE")
    out["unedited_result"] = list(r)
    empties = [o for o in coll.all_objects if o.type == "EMPTY" and o.name.split(".")[0] == POINT]
    if not empties:
        out["errors"].append(f"no empty named {POINT}")
        return
    e = empties[0]
    out["point"] = {"object": e.name, "parent": e.parent.name if e.parent else None,
                    "old_location": list(e.location)}
    # Move and turn in the parent's frame: change the local matrix.
    turn = mathutils.Matrix.Rotation(math.radians(90.0), 4, "Z")
    local = e.matrix_basis.copy()
    loc = local.to_translation() + mathutils.Vector((0.5, 0.0, 0.25))
    rot = (turn @ local.to_quaternion().to_matrix().to_4x4()).to_quaternion()
    e.rotation_mode = "QUATERNION"
    e.location = loc
    e.rotation_quaternion = rot
    bpy.context.view_layer.update()
    out["point"]["new_location"] = list(e.location)
    sc.set_active_collection(bpy.context, coll)
    r = bpy.ops.export_scene.parkan_msh(filepath=os.path.join(WORK, "edited.rlb"), mode="BASE",
                                        target="ARCHIVE")
    out["edited_result"] = list(r)
    # Install into the game: the same edit into ARCHIVE itself, in place.
    sc.set_active_collection(bpy.context, coll)
    r = bpy.ops.export_scene.parkan_msh(filepath=os.path.join(WORK, "unused.rlb"), mode="BASE",
                                        target="ARCHIVE", install=True)
    out["install_result"] = list(r)


harness.run("POINTS_TEST", main, out)
