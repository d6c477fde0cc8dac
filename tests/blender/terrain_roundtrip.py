"""A map through the add-on and back, as a modder saves it (docs/modding.md
"Edit a map"):

    blender -b --factory-startup --python tests/blender/terrain_roundtrip.py -- \\
        ADDON.zip LAND.msh WORK_DIR

Installs the add-on, imports LAND.msh with File > Import > Parkan model and
exports it with File > Export > Parkan model (mode "Edit of the imported
model"):
  unedited.msh  as imported (must be LAND.msh byte for byte);
  moved.msh     the first vertex of the first terrain mesh moved +0.5 along
                Blender z (the game's height);
  retextured.msh  then the image of the first wired terrain material
                replaced by a new 4x4 red image in its glTF base-colour
                node (a modder retexturing the ground): not written, since
                a map material is a Land1.wea row naming shared library
                entries, so a warning naming the material (and the file is
                moved.msh's).
  moved_whole.msh  then the first terrain object moved +1 along Blender x as
                a whole (its object transform, not its vertices): not
                written, a warning naming the object (the file is
                retextured.msh's).
  added.msh     the move undone, then a new one-triangle mesh object put in
                the terrain object's collection: not written (a Land.msh
                holds the terrain only), a warning naming it.
Prints one line `TERRAIN_ROUNDTRIP {json}` with the moved vertex's Blender
position before the move; run by tests/shared_blender_terrain.rs in Blender
3.4.1 and in bpy 5.x.
"""

import os
import sys

import bpy
import mathutils

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402

ZIP, LAND, WORK = (os.path.abspath(a) for a in harness.args()[:3])
out = {"errors": [], "exports": {}}
check = harness.checker(out)


def export(name):
    try:
        r = bpy.ops.export_scene.parkan_msh(filepath=os.path.join(WORK, name), mode="BASE")
        out["exports"][name] = list(r)
    except RuntimeError as e:
        out["exports"][name] = ["ERROR", str(e)]


def main():
    os.makedirs(WORK, exist_ok=True)
    out["blender"] = bpy.app.version_string
    if not harness.install_addon(ZIP, out):
        return
    r = bpy.ops.import_scene.parkan_msh(filepath=LAND)
    if not check("FINISHED" in r, f"import {LAND}: {r}"):
        return
    export("unedited.msh")
    meshes = sorted((o for o in bpy.context.scene.objects if o.type == "MESH"), key=lambda o: o.name)
    if not check(meshes, "no terrain mesh imported"):
        return
    o = meshes[0]
    v = o.data.vertices[0]
    p = (o.matrix_world @ v.co).copy()
    out["moved"] = {"object": o.name, "before": list(p), "copies": 0}
    # Every copy of the map vertex (split by a UV or material seam, or in
    # another mesh) moves together, as a move of a welded vertex would.
    for m in meshes:
        inv = m.matrix_world.inverted()
        for w in m.data.vertices:
            if ((m.matrix_world @ w.co) - p).length < 1e-5:
                w.co = inv @ (p + mathutils.Vector((0.0, 0.0, 0.5)))
                out["moved"]["copies"] += 1
    export("moved.msh")
    retexture()
    export("retextured.msh")
    scene_edits(o)


def scene_edits(o):
    """Two edits a Land.msh cannot hold, each exported on its own."""
    o.location.x += 1.0
    export("moved_whole.msh")
    o.location.x -= 1.0
    mesh = bpy.data.meshes.new("added_rock")
    mesh.from_pydata([(0.0, 0.0, 0.0), (1.0, 0.0, 0.0), (0.0, 1.0, 0.0)], [], [(0, 1, 2)])
    rock = bpy.data.objects.new("added_rock", mesh)
    o.users_collection[0].objects.link(rock)
    export("added.msh")
    out["scene_edits"] = {"moved": o.name, "added": rock.name}


def upstream_image(node):
    """The first Image Texture node feeding `node` (itself included): the
    glTF importer puts a Mix (colour factor x texture) in front of it."""
    todo, seen = [node], set()
    while todo:
        n = todo.pop(0)
        if n is None or n.name in seen:
            continue
        seen.add(n.name)
        if n.type == "TEX_IMAGE":
            return n
        todo += [link.from_node for i in n.inputs for link in i.links]
    return None


def retexture():
    """Replaces the image of the first terrain material's glTF base-colour
    node (the one the add-on's export links back into Base Color)."""
    mats = sorted((m for m in bpy.data.materials if m.get("parkan_gltf_base")), key=lambda m: m.name)
    if not check(mats, "no wired terrain material"):
        return
    mat = mats[0]
    node = upstream_image(mat.node_tree.nodes.get(mat["parkan_gltf_base"]))
    if not check(node is not None, f"{mat.name}: no image behind its glTF base colour"):
        return
    img = bpy.data.images.new("red_ground", 4, 4)
    img.pixels[:] = [1.0, 0.0, 0.0, 1.0] * 16
    img.filepath_raw = os.path.join(WORK, "red_ground.png")
    img.file_format = "PNG"
    img.save()
    node.image = img
    out["retextured"] = {"material": mat.name}


harness.run("TERRAIN_ROUNDTRIP", main, out)
