"""A tank authored in Blender, for tests/blender_authoring.rs (issue 9).

Run as `blender -b --factory-startup --python author_tank.py -- OUT.glb OUT.json`.
Builds the scene modders make: a hull scaled (2, 1, 0.5) that drives, a
turret yawing about the hull's Z (so the hull's non-uniform scale shears
it), a barrel pitching under the turret, a wheel spinning about X, a static
antenna with its own non-uniform scale. Parents are set the Python way
(identity parent inverse). Exports OUT.glb with Blender's own glTF exporter
and writes OUT.json: fps, frame range and, per frame, every object's world
origin (Blender axes, Z up) as Blender evaluates it.
"""

import json
import sys

import bpy

glb, out_json = sys.argv[sys.argv.index("--") + 1:][:2]

bpy.ops.wm.read_factory_settings(use_empty=True)
scene = bpy.context.scene
scene.render.fps = 24
scene.render.fps_base = 1.0
scene.frame_start = 0
scene.frame_end = 48


def box(name, sx, sy, sz):
    verts = [(x * sx, y * sy, z * sz) for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)]
    faces = [(0, 1, 3, 2), (4, 6, 7, 5), (0, 4, 5, 1), (2, 3, 7, 6), (0, 2, 6, 4), (1, 5, 7, 3)]
    me = bpy.data.meshes.new(name)
    me.from_pydata(verts, [], faces)
    me.update()
    ob = bpy.data.objects.new(name, me)
    scene.collection.objects.link(ob)
    return ob


# Linear keys (Blender 3.4 to 5.x: 5.0's layered actions have no
# Action.fcurves, the preference works in both).
bpy.context.preferences.edit.keyframe_new_interpolation_type = "LINEAR"


def keys(ob, path, frames_values):
    for frame, value in frames_values:
        setattr(ob, path, value)
        ob.keyframe_insert(data_path=path, frame=frame)


hull = box("hull", 1.0, 1.0, 0.4)
hull.scale = (2.0, 1.0, 0.5)
turret = box("turret", 0.4, 0.4, 0.2)
turret.parent = hull
turret.location = (0.3, 0.0, 0.5)
barrel = box("barrel", 0.6, 0.05, 0.05)
barrel.parent = turret
barrel.location = (0.5, 0.0, 0.1)
antenna = box("antenna", 0.05, 0.05, 0.5)
antenna.parent = turret
antenna.location = (-0.2, -0.2, 0.3)
antenna.rotation_euler = (0.4, 0.0, 0.3)
antenna.scale = (0.5, 1.0, 1.0)
wheel = box("wheel", 0.3, 0.1, 0.3)
wheel.parent = hull
wheel.location = (-0.8, -0.9, -0.4)

keys(hull, "location", [(0, (0.0, 0.0, 0.0)), (36, (3.0, -1.0, 0.0))])
keys(turret, "rotation_euler", [(f, (0.0, 0.0, a)) for f, a in ((0, 0.0), (12, 1.5), (24, 3.0), (36, 4.5))])
keys(barrel, "rotation_euler", [(f, (0.0, a, 0.0)) for f, a in ((0, 0.0), (14, -0.5), (29, 0.2))])
keys(wheel, "rotation_euler", [(f, (a, 0.0, 0.0)) for f, a in ((0, 0.0), (12, 2.0), (24, 4.0))])

world = {}
for f in range(scene.frame_start, scene.frame_end + 1):
    scene.frame_set(f)
    world[str(f)] = {ob.name: list(ob.matrix_world.translation) for ob in scene.objects}

scene.frame_set(0)
bpy.ops.export_scene.gltf(filepath=glb, export_format="GLB", export_animations=True)
with open(out_json, "w") as fh:
    json.dump({"blender": bpy.app.version_string, "fps": 24,
               "frames": [scene.frame_start, scene.frame_end], "world": world}, fh)
print("AUTHOR_TANK_OK")
