"""Blender round trip of an exported map, as a modder's save would do it:

    blender -b --factory-startup --python tests/blender/terrain_roundtrip.py -- IN.glb OUT.glb

Imports IN.glb with Blender's glTF importer and exports the scene with its
glTF exporter (extras on). Run by tests/shared_blender_terrain.rs, which
converts OUT.glb back with gltf2msh --base and compares bytes.
"""

import sys

import bpy
import numpy

if not hasattr(numpy, "bool"):  # Blender 3.4's glTF I/O with numpy >= 1.24
    numpy.bool = bool

args = sys.argv[sys.argv.index("--") + 1:]
bpy.ops.wm.read_factory_settings(use_empty=True)
bpy.ops.import_scene.gltf(filepath=args[0])
bpy.ops.export_scene.gltf(filepath=args[1], export_format="GLB", export_extras=True, export_colors=True)
print("ROUNDTRIP_DONE")
