"""A spinning radar authored in Blender, for tests/blender_authoring.rs (issue 15).

Run as `blender -b --factory-startup --python author_radar.py -- OUT.glb OUT.json`.
A box keyed (linear) on its Euler Z at 0, 180 and 360 degrees (frames 0, 36,
72): keyed spans of 180 degrees, which quaternion keys cannot express. Exports
OUT.glb with the add-on's own settings for a new model
(`io_scene_parkan.export_gltf(..., sample=True)`, imported from the source
tree) and writes OUT.json: per frame, the radar's world X and Y axes (Blender
axes, Z up) as Blender evaluates them.
"""

import json
import math
import os
import sys

import bpy

glb, out_json = sys.argv[sys.argv.index("--") + 1:][:2]
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "blender"))
import io_scene_parkan  # noqa: E402

bpy.ops.wm.read_factory_settings(use_empty=True)
scene = bpy.context.scene
scene.render.fps = 24
scene.render.fps_base = 1.0
scene.frame_start = 0
scene.frame_end = 72
bpy.context.preferences.edit.keyframe_new_interpolation_type = "LINEAR"

verts = [(x * 1.0, y * 0.2, z * 0.1) for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)]
faces = [(0, 1, 3, 2), (4, 6, 7, 5), (0, 4, 5, 1), (2, 3, 7, 6), (0, 2, 6, 4), (1, 5, 7, 3)]
me = bpy.data.meshes.new("radar")
me.from_pydata(verts, [], faces)
me.update()
radar = bpy.data.objects.new("radar", me)
scene.collection.objects.link(radar)
radar.location = (0.0, 0.0, 1.0)
for frame, deg in ((0, 0.0), (36, 180.0), (72, 360.0)):
    radar.rotation_euler = (0.0, 0.0, math.radians(deg))
    radar.keyframe_insert(data_path="rotation_euler", frame=frame)

world = {}
for f in range(scene.frame_start, scene.frame_end + 1):
    scene.frame_set(f)
    m = radar.matrix_world
    world[str(f)] = {"x": [m[r][0] for r in range(3)], "y": [m[r][1] for r in range(3)]}
scene.frame_set(0)
res = io_scene_parkan.export_gltf(bpy.context, glb, sample=True)
with open(out_json, "w") as fh:
    json.dump({"blender": bpy.app.version_string, "world": world}, fh)
print("AUTHOR_RADAR_OK" if "FINISHED" in res else f"AUTHOR_RADAR_FAILED {res}")
