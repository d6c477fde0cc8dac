"""Recolours a material and paints its texture in Blender, then exports
through the io_scene_parkan add-on (mode "Edit of the imported model",
an archive copy); the add-on passes the imported model's game folder to
gltf2msh, which writes copies of Material.lib and Textures.lib beside the
output (issue 23).

    BLENDER_USER_SCRIPTS=TMP/scripts BLENDER_USER_CONFIG=TMP/config \\
    blender -b --factory-startup --python tests/blender/retexture_test.py -- \\
        ADDON.zip ARCHIVE ENTRY MATERIAL WORK_DIR

Run by tests/shared_blender_retexture.rs, which reads the result back with
msh2gltf. Prints one line `RETEXTURE_TEST {json}` (`errors` lists what
failed on the Blender side).
"""

import os
import sys

import bpy

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402

argv = harness.args()
ZIP, ARCHIVE, ENTRY, MATERIAL, WORK = (os.path.abspath(argv[0]), os.path.abspath(argv[1]), argv[2],
                                       argv[3], os.path.abspath(argv[4]))
out = {"errors": []}


def main():
    os.makedirs(WORK, exist_ok=True)
    out["blender"] = bpy.app.version_string
    harness.install_addon(ZIP, out)
    from io_scene_parkan import scene as sc
    r = bpy.ops.import_scene.parkan_msh(filepath=ARCHIVE, entry_name=ENTRY, fps=24.0)
    out["import"] = list(r)
    coll = bpy.data.collections.get(os.path.splitext(ENTRY)[0])
    out["game_dir"] = str((coll.get("parkan_import") or {}).get("game_dir", ""))
    mat = next((m for m in bpy.data.materials if m.name.split("+")[0] == MATERIAL), None)
    if mat is None:
        out["errors"].append(f"no material {MATERIAL}: {[m.name for m in bpy.data.materials]}")
        return
    # Recolour: the factor the importer put before the Base Color socket.
    base_in = sc.find_bsdf(mat.node_tree).inputs["Base Color"]
    if base_in.is_linked:
        src = base_in.links[0].from_node
        factor = next((i for i in src.inputs if i.type == "RGBA" and i.enabled and not i.is_linked), None)
    else:
        factor = base_in
    if factor is None:
        out["errors"].append("no colour factor input")
        return
    factor.default_value = (1.0, 0.2, 0.0, 1.0)
    # Paint: the image's bottom row (Blender's row 0) red.
    img = next(n.image for n in mat.node_tree.nodes if n.type == "TEX_IMAGE" and n.image)
    w, h = img.size
    px = list(img.pixels)
    for x in range(w):
        px[x * 4:x * 4 + 4] = [1.0, 0.0, 0.0, 1.0]
    img.pixels[:] = px
    img.update()
    out["image"] = {"name": img.name, "size": [w, h], "dirty": img.is_dirty,
                    "packed": img.packed_file is not None}
    sc.set_active_collection(bpy.context, coll)
    reports = []
    try:
        r = bpy.ops.export_scene.parkan_msh(filepath=os.path.join(WORK, "out.rlb"), mode="BASE",
                                            target="ARCHIVE")
        out["export"] = list(r)
    except RuntimeError as e:
        out["errors"].append(f"export: {e}")
    out["reports"] = reports


harness.run("RETEXTURE_TEST", main, out)
sys.stdout.flush()
