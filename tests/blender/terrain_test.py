"""Maps through the io_scene_parkan add-on in headless Blender.

    blender -b --factory-startup --python tests/blender/terrain_test.py -- \\
        ADDON.zip MAP_DIR [--render OUT.png]

Installs and enables the add-on, imports MAP_DIR/Land.msh through
File > Import > Parkan model, checks the terrain node trees (microtexture ×
2, second material mixed by the COLOR_0 alpha, water marked), imports the
map folder itself, and renders a top-down view with Cycles (CPU).
Prints one line `TERRAIN_TEST {json}` (`errors` lists what failed).
"""

import math
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
ZIP, MAP = os.path.abspath(argv[0]), os.path.abspath(argv[1])
out = {"errors": []}


check = harness.checker(out)


def linked_from(sock):
    return sock.links[0].from_node if sock.is_linked else None


def inspect_materials():
    mats = {}
    for m in bpy.data.materials:
        if not m.use_nodes:
            continue
        nodes = m.node_tree.nodes
        blend = nodes.get("parkan_blend")
        mats[m.name] = {
            "micro": bool(nodes.get("parkan_micro") and nodes["parkan_micro"].image),
            "micro_image": nodes["parkan_micro"].image.name if nodes.get("parkan_micro") and nodes["parkan_micro"].image else None,
            "x2": bool(nodes.get("parkan_base_x2")),
            "blend": bool(blend),
            "blend_by_alpha": bool(blend and getattr(linked_from(blend.inputs[0]), "name", "") == "parkan_alpha"),
            "over_micro": bool(nodes.get("parkan_over_micro")),
            "water": bool(m.get("parkan_water")),
        }
    return mats


def render(path):
    import mathutils
    scene = bpy.context.scene
    pts = [o.matrix_world @ mathutils.Vector(c) for o in scene.objects if o.type == "MESH" for c in o.bound_box]
    lo = mathutils.Vector([min(p[i] for p in pts) for i in range(3)])
    hi = mathutils.Vector([max(p[i] for p in pts) for i in range(3)])
    center, size = (lo + hi) / 2, (hi - lo).length
    cam = bpy.data.objects.new("cam", bpy.data.cameras.new("cam"))
    scene.collection.objects.link(cam)
    cam.location = center + mathutils.Vector((0.0, -0.55, 0.75)) * size
    cam.rotation_euler = (center - cam.location).to_track_quat("-Z", "Y").to_euler()
    cam.data.lens = 32
    cam.data.clip_end = size * 4
    scene.camera = cam
    sun = bpy.data.objects.new("sun", bpy.data.lights.new("sun", "SUN"))
    sun.rotation_euler = (math.radians(40), 0.0, math.radians(30))
    sun.data.energy = 3.0
    scene.collection.objects.link(sun)
    if scene.world is None:
        scene.world = bpy.data.worlds.new("world")
    scene.world.color = (0.35, 0.38, 0.42)
    scene.render.engine = "CYCLES"
    scene.cycles.samples = 12
    scene.cycles.device = "CPU"
    scene.cycles.use_denoising = False
    scene.render.resolution_x, scene.render.resolution_y = 640, 400
    scene.render.resolution_percentage = 100
    scene.render.image_settings.file_format = "PNG"
    scene.render.filepath = path
    bpy.ops.render.render(write_still=True)
    out["render"] = os.path.isfile(path)


def main():
    out["blender"] = bpy.app.version_string
    harness.install_addon(ZIP, out)
    r = bpy.ops.import_scene.parkan_msh(filepath=os.path.join(MAP, "Land.msh"))
    check("FINISHED" in r, f"import Land.msh: {r}")
    out["objects"] = sorted(o.name for o in bpy.data.objects if o.type == "MESH")
    out["materials"] = inspect_materials()
    if render_png:
        render(render_png)
    n_before = len(bpy.data.objects)
    r = bpy.ops.import_scene.parkan_msh(filepath=MAP + os.sep)
    check("FINISHED" in r, f"import map folder: {r}")
    out["folder_objects"] = len(bpy.data.objects) - n_before


harness.run("TERRAIN_TEST", main, out)
sys.stdout.flush()
