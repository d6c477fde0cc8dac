"""Render a preview PNG of converted models in headless Blender (Cycles, CPU).

    blender -b --factory-startup --python scripts/render_preview.py -- OUT.png MODEL.glb [MODEL.glb ...] [--frame N] [--size WxH]

Imports each glTF side by side along X, wires lightmaps into the base colour
as `blender_import_all.py` does (the game's texture x lightmap), frames a
camera on everything, lights it with a sun and a grey sky, and renders
one frame. Prints `RENDER_SUMMARY {json}`.
"""

import json
import math
import os
import sys

import bpy
from mathutils import Vector

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import blender_import_all  # noqa: E402  (numpy workaround, the add-on's helpers)


def parse_args(argv):
    args = argv[argv.index("--") + 1:] if "--" in argv else []
    frame, size = 0, (640, 400)
    if "--frame" in args:
        i = args.index("--frame")
        frame = int(args[i + 1])
        del args[i:i + 2]
    if "--size" in args:
        i = args.index("--size")
        w, h = args[i + 1].lower().split("x")
        size = (int(w), int(h))
        del args[i:i + 2]
    if len(args) < 2:
        print("usage: blender -b --python render_preview.py -- OUT.png MODEL.glb [...]")
        sys.exit(2)
    return args[0], args[1:], frame, size


def main():
    out, models, frame, size = parse_args(sys.argv)
    bpy.ops.wm.read_factory_settings(use_empty=True)
    scene = bpy.context.scene
    offset = 0.0
    wired = 0
    for path in models:
        before = set(bpy.data.objects)
        bpy.ops.import_scene.gltf(filepath=path)
        new = [o for o in bpy.data.objects if o not in before]
        blender_import_all.activate_animations(new)
        scene.frame_set(frame)
        bpy.context.view_layer.update()
        pts = [o.matrix_world @ Vector(c) for o in new if o.type == "MESH" for c in o.bound_box]
        if not pts:
            continue
        lo = min(p.x for p in pts)
        hi = max(p.x for p in pts)
        for o in new:
            if o.parent is None:
                o.location.x += offset - lo
        offset += (hi - lo) * 1.15
    wired = sum(1 for m in bpy.data.materials if blender_import_all.wire_lightmap(m))
    scene.frame_set(frame)
    bpy.context.view_layer.update()
    pts = [o.matrix_world @ Vector(c) for o in bpy.data.objects if o.type == "MESH" for c in o.bound_box]
    lo = Vector((min(p.x for p in pts), min(p.y for p in pts), min(p.z for p in pts)))
    hi = Vector((max(p.x for p in pts), max(p.y for p in pts), max(p.z for p in pts)))
    center, radius = (lo + hi) / 2, max((hi - lo).length / 2, 1e-3)

    cam_data = bpy.data.cameras.new("preview")
    cam_data.lens = 50
    cam = bpy.data.objects.new("preview", cam_data)
    scene.collection.objects.link(cam)
    direction = Vector((1.0, -1.6, 0.9)).normalized()
    cam.location = center + direction * radius * 3.0
    cam.rotation_euler = (center - cam.location).to_track_quat("-Z", "Y").to_euler()
    scene.camera = cam
    sun_data = bpy.data.lights.new("sun", "SUN")
    sun_data.energy = 3.0
    sun = bpy.data.objects.new("sun", sun_data)
    sun.rotation_euler = (math.radians(40), math.radians(10), math.radians(30))
    scene.collection.objects.link(sun)
    world = bpy.data.worlds.new("sky")
    world.use_nodes = True
    world.node_tree.nodes["Background"].inputs[0].default_value = (0.45, 0.5, 0.55, 1.0)
    world.node_tree.nodes["Background"].inputs[1].default_value = 0.8
    scene.world = world

    scene.render.engine = "CYCLES"
    scene.cycles.device = "CPU"
    scene.cycles.samples = 32
    scene.cycles.use_denoising = False
    scene.render.resolution_x, scene.render.resolution_y = size
    scene.render.resolution_percentage = 100
    scene.render.image_settings.file_format = "PNG"
    scene.render.filepath = os.path.abspath(out)
    bpy.ops.render.render(write_still=True)
    print("RENDER_SUMMARY " + json.dumps({"file": out, "models": len(models),
                                          "lightmaps_wired": wired, "frame": frame}))


main()
