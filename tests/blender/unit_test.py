"""Drives File > Import > Parkan unit (.dat) inside headless Blender.

    blender -b --factory-startup --python tests/blender/unit_test.py -- ADDON.zip UNIT.dat [--render OUT.png]

Installs and enables the add-on zip, imports the unit through the
operator, and prints one line `UNIT_TEST {json}`: the clip names that got
actions on NLA tracks, the actions active per object, the control-point
empties, the part collections, and `errors` (what failed on this side).
Run by tests/shared_blender_units.rs.
"""

import os
import sys

import bpy

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402

argv = harness.args()
render_png = None
if "--render" in argv:
    i = argv.index("--render")
    render_png = os.path.abspath(argv[i + 1])
    del argv[i:i + 2]
ZIP, DAT = os.path.abspath(argv[0]), os.path.abspath(argv[1])
out = {"errors": []}


def render(coll, path):
    """A picture of the assembled unit at frame 0 (workbench, studio light)."""
    import mathutils
    scene = bpy.context.scene
    scene.frame_set(0)
    bpy.context.view_layer.update()
    pts = [o.matrix_world @ mathutils.Vector(c) for o in coll.all_objects if o.type == "MESH"
           for c in o.bound_box]
    lo = mathutils.Vector([min(p[i] for p in pts) for i in range(3)])
    hi = mathutils.Vector([max(p[i] for p in pts) for i in range(3)])
    center, size = (lo + hi) / 2, max((hi - lo).length, 1e-3)
    cam = bpy.data.objects.new("cam", bpy.data.cameras.new("cam"))
    scene.collection.objects.link(cam)
    direction = mathutils.Vector((1.0, -1.2, 0.7)).normalized()
    cam.location = center + direction * size * 1.3
    cam.rotation_euler = (center - cam.location).to_track_quat("-Z", "Y").to_euler()
    cam.data.lens = 45
    scene.camera = cam
    if scene.world is None:
        scene.world = bpy.data.worlds.new("world")
    scene.world.color = (0.18, 0.2, 0.24)
    scene.render.engine = "BLENDER_WORKBENCH"
    scene.display.shading.light = "STUDIO"
    scene.display.shading.color_type = "TEXTURE"
    scene.display.render_aa = "8"
    scene.render.resolution_x, scene.render.resolution_y = 640, 420
    scene.render.resolution_percentage = 100
    scene.render.image_settings.file_format = "PNG"
    scene.render.filepath = path
    bpy.ops.render.render(write_still=True)
    return os.path.isfile(path)


def main():
    harness.install_addon(ZIP, out)
    out["operator"] = hasattr(bpy.ops.import_scene, "parkan_unit")
    r = bpy.ops.import_scene.parkan_unit(filepath=DAT, fps=24.0)
    out["result"] = list(r)
    stem = os.path.splitext(os.path.basename(DAT))[0]
    coll = bpy.data.collections.get(stem)
    if coll is None:
        out["errors"].append(f"no collection {stem}")
        return
    objs = list(coll.all_objects)
    out["objects"] = len(objs)
    out["parts"] = sorted(c.name for c in coll.children)
    clip_tracks = {}
    active = set()
    for o in objs:
        ad = o.animation_data
        if ad is None:
            continue
        if ad.action is not None:
            active.add(ad.action.name)
            if "parkan_clip" in ad.action.keys():
                out["errors"].append(f"{o.name}: a clip action is active")
        for t in ad.nla_tracks:
            for s in t.strips:
                if s.action is not None and "parkan_clip" in s.action.keys():
                    clip_tracks.setdefault(t.name, []).append(o.name)
                    if not t.mute:
                        out["errors"].append(f"{o.name}: clip track {t.name} not muted")
    out["clip_tracks"] = sorted(clip_tracks)
    out["active_actions"] = len(active)
    out["control_points"] = sorted(o.name for o in objs if o.type == "EMPTY"
                                   and o.empty_display_type == "SINGLE_ARROW")
    if render_png:
        out["render"] = render(coll, render_png)


harness.run("UNIT_TEST", main, out)
