"""Import a msh2gltf output folder into one .blend, a collection per archive.

Headless usage (Blender 3.4 or later):

    blender -b --factory-startup --python scripts/blender_import_all.py -- OUT_DIR all.blend [--fps 24]

Every `.glb`/`.gltf` under OUT_DIR is imported into a collection per
archive: named after its folder below OUT_DIR (a game folder's output:
OUT_DIR/<archive>/...; nested folders give nested collections), or, for the
files directly in OUT_DIR (`msh2gltf units.rlb OUT_DIR`), after the archive
its glTF scene extras name (`msh.source` = `.../units.rlb:ENTRY` gives
`units`), else after OUT_DIR itself. Each model's animation (msh2gltf writes one per model) is
made the active action of its objects, and the scene frame range covers the
longest one. Lightmaps (a material's glTF occlusionTexture on TEXCOORD_1,
what msh2gltf writes for lit batches) are multiplied into the base colour,
as the game draws them (format-notes §6: colour = texture x lightmap). At
the end one line `IMPORT_SUMMARY {json}` is printed: models imported and
failed, objects, materials, materials with an image texture, materials
with a wired lightmap, actions, terrain materials wired as the game
draws a map (first texture x microtexture x 2, the second material mixed
over it by the per-vertex alpha COLOR_0.a; water marked `parkan_water`).
"""

import json
import os
import sys
import traceback

import bpy

try:  # Blender 3.4's glTF importer uses np.bool, removed in numpy 1.24 (no
    import numpy  # hasattr(): in numpy 1.24..1.26 that prints a FutureWarning)
    if "bool" not in vars(numpy):
        numpy.bool = bool
except ImportError:
    pass


def parse_args(argv):
    args = argv[argv.index("--") + 1:] if "--" in argv else []
    fps = 24
    if "--fps" in args:
        i = args.index("--fps")
        fps = int(args[i + 1])
        del args[i:i + 2]
    if len(args) != 2:
        print("usage: blender -b --python blender_import_all.py -- OUT_DIR out.blend [--fps N]")
        sys.exit(2)
    return args[0], args[1], fps


def collection_for(rel_dir, root):
    """The collection for a relative folder, created (nested) on demand."""
    parent = root
    if rel_dir in ("", "."):
        return parent
    for part in rel_dir.split(os.sep):
        child = parent.children.get(part)
        if child is None:
            child = bpy.data.collections.new(part)
            parent.children.link(child)
        parent = child
    return parent


# The lightmap wiring is the add-on's (one implementation): multiply the
# material's occlusion image (UV map 2) into Base Color.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "blender", "io_scene_parkan"))
from scene import (LIGHTMAP_NODE, activate_animations, layer_collection, move_to_collection,  # noqa: E402
                   wire_lightmap)
from terrain import wire_map  # noqa: E402  (maps: microtexture x 2, second material by alpha)
from tools import gltf_json  # noqa: E402


def archive_stem(path, out_dir):
    """The collection name for a file directly in OUT_DIR: the stem of the
    archive in its scene extras `msh.source` (ARCHIVE:ENTRY), else OUT_DIR's name."""
    try:
        doc = gltf_json(path)
        scenes = doc.get("scenes") or [{}]
        src = ((scenes[doc.get("scene", 0) or 0].get("extras") or {}).get("msh") or {}).get("source", "")
    except (OSError, ValueError, IndexError, AttributeError):
        src = ""
    arch, sep, _entry = src.rpartition(":")
    if sep and arch and not os.path.exists(src):
        return os.path.splitext(os.path.basename(arch))[0]
    return os.path.basename(os.path.normpath(os.path.abspath(out_dir)))


def lightmap_linked(mat):
    """True when the material's Base Color comes from the lightmap Mix node
    fed by an image (what `wire_lightmap` builds)."""
    nt = mat.node_tree
    mix = nt.nodes.get(LIGHTMAP_NODE)
    if mix is None:
        return False
    feeds_base = any(l.to_socket.name == "Base Color" for o in mix.outputs for l in o.links)
    has_image = any(l.from_node.type == "TEX_IMAGE" for i in mix.inputs for l in i.links)
    return feeds_base and has_image


def main():
    out_dir, blend_path, fps = parse_args(sys.argv)
    bpy.ops.wm.read_factory_settings(use_empty=True)
    scene = bpy.context.scene
    scene.render.fps = fps
    root = scene.collection
    files = []
    for dirpath, _dirs, names in os.walk(out_dir):
        for n in sorted(names):
            if n.lower().endswith((".glb", ".gltf")):
                files.append(os.path.join(dirpath, n))
    files.sort()
    summary = {"models": 0, "failed": [], "objects": 0, "materials": 0,
               "materials_with_image": 0, "materials_with_lightmap": 0, "actions": 0,
               "collections": 0, "terrain_materials": 0}
    frame_end = 1
    for path in files:
        rel_dir = os.path.relpath(os.path.dirname(path), out_dir)
        if rel_dir in ("", "."):
            rel_dir = archive_stem(path, out_dir)
        coll = collection_for(rel_dir, root)
        lc = layer_collection(bpy.context.view_layer.layer_collection, coll)
        if lc is not None:
            bpy.context.view_layer.active_layer_collection = lc
        before = set(bpy.data.objects)
        mats_before = set(bpy.data.materials)
        try:
            bpy.ops.import_scene.gltf(filepath=path)
        except Exception:  # one broken file costs only that model
            summary["failed"].append({"file": path, "error": traceback.format_exc().splitlines()[-1]})
            continue
        summary["models"] += 1
        new = [o for o in bpy.data.objects if o not in before]
        move_to_collection(new, coll)  # Blender 3.4's importer links into the scene's collection
        if path.lower().endswith(".glb"):
            summary["terrain_materials"] += wire_map(
                path, new, [m for m in bpy.data.materials if m not in mats_before])
        # Activate the model's animation: the first stashed NLA action of each object.
        frame_end = max(frame_end, activate_animations(new))
    scene.frame_start = 0
    scene.frame_end = frame_end
    summary["objects"] = len(bpy.data.objects)
    summary["materials"] = len(bpy.data.materials)
    summary["materials_with_image"] = sum(
        1 for m in bpy.data.materials
        if m.use_nodes and any(n.type == "TEX_IMAGE" and n.image for n in m.node_tree.nodes))
    lit = sorted(m.name for m in bpy.data.materials if wire_lightmap(m) and lightmap_linked(m))
    summary["materials_with_lightmap"] = len(lit)
    summary["lightmap_materials"] = lit[:50]
    summary["actions"] = len(bpy.data.actions)
    summary["collections"] = len(bpy.data.collections)
    bpy.ops.wm.save_as_mainfile(filepath=os.path.abspath(blend_path))
    print("IMPORT_SUMMARY " + json.dumps(summary))
    sys.exit(1 if summary["failed"] else 0)


if __name__ == "__main__":
    main()
