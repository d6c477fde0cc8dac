"""Drives the io_scene_parkan add-on inside headless Blender.

    BLENDER_USER_SCRIPTS=TMP/scripts BLENDER_USER_CONFIG=TMP/config \\
    blender -b --factory-startup --python tests/blender/addon_test.py -- \\
        ADDON.zip ARCHIVE ENTRY WORK_DIR [--render OUT.png] [--demo GAME_DIR] [--bad BROKEN.msh]

Run by tests/shared_blender_addon.rs, which checks the outcome against the
project's own decoder. The steps: install the zip (into the temporary user
scripts folder) and enable it; list the archive's models; import ENTRY
through File > Import > Parkan model; export it unedited through File >
Export (WORK_DIR/unedited.msh, and WORK_DIR/unedited.rlb as an archive
copy); move one vertex by +0.25 along the model's z and export again
(WORK_DIR/edited.msh); import a constructed glTF whose material has an
occlusionTexture on TEXCOORD_1 and check the lightmap wiring and that a glTF
export through the add-on's bypass keeps the material; render a PNG. With
--demo: import the whole game folder, then export the scene as a new model
(WORK_DIR/new.msh + new.wea) and into a copy of its archive
(WORK_DIR/new_into.rlb, entry NEWMODEL). With --bad: the import must fail
with the converter's message.
Prints one line `ADDON_TEST {json}`; everything asserted on the Blender side
is in there too (`errors` lists what failed).
"""

import base64
import json
import os
import struct
import sys
import traceback
import zlib

import bpy

argv = sys.argv[sys.argv.index("--") + 1:] if "--" in sys.argv else []


def opt(name):
    if name in argv:
        i = argv.index(name)
        v = os.path.abspath(argv[i + 1])
        del argv[i:i + 2]
        return v
    return None


render_png = opt("--render")
demo_dir = opt("--demo")  # a small game folder (samples/demo): folder import, new model
bad_model = opt("--bad")  # a broken model: the error must reach the operator's report
ZIP, ARCHIVE, ENTRY, WORK = (os.path.abspath(argv[0]), os.path.abspath(argv[1]), argv[2],
                            os.path.abspath(argv[3]))
out = {"errors": []}


def check(cond, what):
    if not cond:
        out["errors"].append(what)
    return cond


def png_bytes(w, h, pixel):
    """A tiny RGBA PNG, pixel(x, y) -> (r, g, b, a)."""
    raw = b"".join(b"\0" + b"".join(bytes(pixel(x, y)) for x in range(w)) for y in range(h))

    def chunk(t, d):
        return struct.pack(">I", len(d)) + t + d + struct.pack(">I", zlib.crc32(t + d) & 0xFFFFFFFF)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 6, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))


def lightmap_gltf(path):
    """A quad with two UV sets, a base colour texture (TEXCOORD_0) and a
    lightmap as occlusionTexture on TEXCOORD_1, as msh2gltf writes lit batches."""
    pos = [(-1, 0, -1), (1, 0, -1), (1, 0, 1), (-1, 0, 1)]
    uv0 = [(0, 0), (1, 0), (1, 1), (0, 1)]
    uv1 = [(0, 0), (0.5, 0), (0.5, 0.5), (0, 0.5)]
    idx = [0, 2, 1, 0, 3, 2]
    buf = b"".join(struct.pack("<3f", *p) for p in pos) + b"".join(struct.pack("<2f", *u) for u in uv0) \
        + b"".join(struct.pack("<2f", *u) for u in uv1) + struct.pack("<6H", *idx)
    buf += b"\0" * (-len(buf) % 4)
    tex = png_bytes(8, 8, lambda x, y: (200, 60 + 20 * x, 40, 255))
    lm = png_bytes(8, 8, lambda x, y: (30 * y, 30 * y, 30 * y, 255))
    uri = lambda b, m: f"data:{m};base64," + base64.b64encode(b).decode()
    doc = {
        "asset": {"version": "2.0"},
        "scene": 0, "scenes": [{"nodes": [0]}],
        "nodes": [{"name": "lit_quad", "mesh": 0}],
        "meshes": [{"name": "slot0", "primitives": [{
            "attributes": {"POSITION": 0, "TEXCOORD_0": 1, "TEXCOORD_1": 2}, "indices": 3, "material": 0}]}],
        "materials": [{
            "name": "WALL.0+LM007.0",
            "pbrMetallicRoughness": {"baseColorTexture": {"index": 0}, "metallicFactor": 0.0},
            "occlusionTexture": {"index": 1, "texCoord": 1},
            "extras": {"msh": {"material_index": 0, "name": "WALL.0", "lightmap": "LM007.0"}}}],
        "textures": [{"source": 0}, {"source": 1}],
        "images": [{"name": "WALL_TEX", "uri": uri(tex, "image/png")},
                   {"name": "LM007.0", "uri": uri(lm, "image/png")}],
        "buffers": [{"byteLength": len(buf), "uri": uri(buf, "application/octet-stream")}],
        "bufferViews": [{"buffer": 0, "byteOffset": 0, "byteLength": 48},
                        {"buffer": 0, "byteOffset": 48, "byteLength": 32},
                        {"buffer": 0, "byteOffset": 80, "byteLength": 32},
                        {"buffer": 0, "byteOffset": 112, "byteLength": 12}],
        "accessors": [
            {"bufferView": 0, "componentType": 5126, "count": 4, "type": "VEC3",
             "min": [-1, 0, -1], "max": [1, 0, 1]},
            {"bufferView": 1, "componentType": 5126, "count": 4, "type": "VEC2"},
            {"bufferView": 2, "componentType": 5126, "count": 4, "type": "VEC2"},
            {"bufferView": 3, "componentType": 5123, "count": 6, "type": "SCALAR"}],
    }
    with open(path, "w") as f:
        json.dump(doc, f)


def mesh_objects(coll):
    return sorted((o for o in coll.all_objects if o.type == "MESH"), key=lambda o: o.name)


def main():
    os.makedirs(WORK, exist_ok=True)
    out["blender"] = bpy.app.version_string
    bpy.ops.wm.read_factory_settings(use_empty=True)
    # 1. install and enable (the user scripts folder is the caller's temporary one)
    out["user_scripts"] = bpy.utils.user_resource("SCRIPTS")
    r = bpy.ops.preferences.addon_install(filepath=ZIP, overwrite=True)
    check("FINISHED" in r, f"addon_install: {r}")
    r = bpy.ops.preferences.addon_enable(module="io_scene_parkan")
    check("FINISHED" in r, f"addon_enable: {r}")
    import io_scene_parkan as addon
    from io_scene_parkan import scene as sc, tools
    out["addon_file"] = addon.__file__
    out["menu_import"] = hasattr(bpy.ops.import_scene, "parkan_msh")
    out["menu_export"] = hasattr(bpy.ops.export_scene, "parkan_msh")
    ctx = bpy.context
    out["msh2gltf"] = addon.binary(ctx, "msh2gltf")
    out["gltf2msh"] = addon.binary(ctx, "gltf2msh")
    listed = tools.list_models(out["msh2gltf"], ARCHIVE)["models"]
    out["entries"] = [m["name"] for m in listed]

    # 2. import one entry through the operator, picked in the Model list as in the UI
    ident = [f"E{m['index']}" for m in listed if m["name"] == ENTRY][0]
    r = bpy.ops.import_scene.parkan_msh(filepath=ARCHIVE, entry=ident, fps=24.0)
    out["import_result"] = list(r)
    stem = os.path.splitext(ENTRY)[0]
    coll = bpy.data.collections.get(stem)
    if not check(coll is not None, f"no collection {stem}"):
        return
    out["collection_msh"] = sc.idprop_dict(coll["msh"])
    objs = sorted(coll.all_objects, key=lambda o: o.name)
    out["objects"] = len(objs)
    out["mesh_objects"] = len([o for o in objs if o.type == "MESH"])
    out["animated_objects"] = sorted(o.name for o in objs
                                     if o.animation_data and o.animation_data.action)
    mats = {s.material for o in objs for s in o.material_slots if s.material}
    out["materials"] = sorted(m.name for m in mats)
    out["materials_with_image"] = sorted(
        m.name for m in mats if m.use_nodes and any(n.type == "TEX_IMAGE" and n.image for n in m.node_tree.nodes))
    out["frame_range"] = [ctx.scene.frame_start, ctx.scene.frame_end]
    out["fps"] = ctx.scene.render.fps

    # 3. export unedited: bare model and archive copy
    sc.set_active_collection(ctx, coll)
    for name, target in (("unedited.msh", "MSH"), ("unedited.rlb", "ARCHIVE")):
        r = bpy.ops.export_scene.parkan_msh(filepath=os.path.join(WORK, name), mode="BASE", target=target)
        check("FINISHED" in r, f"export {name}: {r}")

    # 4. move one vertex of the first mesh object by +0.25 along z, export again
    o = mesh_objects(coll)[0]
    v = o.data.vertices[0]
    out["moved"] = {"object": o.name, "mesh": o.data.name, "vertex": 0, "old": list(v.co)}
    v.co.z += 0.25
    o.data.update()
    out["moved"]["new"] = list(v.co)
    bpy.context.view_layer.objects.active = o
    r = bpy.ops.export_scene.parkan_msh(filepath=os.path.join(WORK, "edited.msh"), mode="BASE")
    check("FINISHED" in r, f"export edited.msh: {r}")

    # 4b. a colour edit (the baseColorFactor input of the first material's
    # colour Mix node) against the base: gltf2msh refuses it
    # (gltf.material_edit) and the refusal reaches the UI; nothing is written.
    mat = next(m for ob in mesh_objects(coll) for m in ob.data.materials if m is not None)
    base_in = sc.find_bsdf(mat.node_tree).inputs["Base Color"]
    factor = None
    if base_in.is_linked:
        src = base_in.links[0].from_node
        factor = next((i for i in src.inputs if i.type == "RGBA" and i.enabled and not i.is_linked), None)
    else:
        factor = base_in
    old_colour = tuple(factor.default_value)
    factor.default_value = (0.9, 0.1, 0.1, 1.0)
    bpy.context.view_layer.objects.active = o
    try:
        r = bpy.ops.export_scene.parkan_msh(filepath=os.path.join(WORK, "recoloured.msh"), mode="BASE")
        out["colour_edit"] = {"result": list(r), "material": mat.name}
    except RuntimeError as e:
        out["colour_edit"] = {"error": str(e), "material": mat.name}
    factor.default_value = old_colour

    # 5. lightmap wiring on a constructed glTF (occlusionTexture on TEXCOORD_1)
    lm_path = os.path.join(WORK, "lit_quad.gltf")
    lightmap_gltf(lm_path)
    want = tools.lightmap_materials(tools.gltf_json(lm_path))
    check(want == {"WALL.0+LM007.0": "LM007.0"}, f"lightmap_materials: {want}")
    before = set(bpy.data.materials)
    bpy.ops.import_scene.gltf(filepath=lm_path)
    mat = [m for m in bpy.data.materials if m not in before][0]
    lm = {"wired": sc.wire_lightmap(mat)}
    tree = mat.node_tree
    mix = tree.nodes.get(sc.LIGHTMAP_NODE)
    bsdf = sc.find_bsdf(tree)
    if check(mix is not None, "no lightmap Mix node"):
        lm["blend_type"] = mix.blend_type
        base = bsdf.inputs["Base Color"]
        lm["base_from_mix"] = base.is_linked and base.links[0].from_node == mix
        ins = [s for s in mix.inputs if s.type == "RGBA" and s.enabled]
        a_src = ins[0].links[0].from_node if ins[0].is_linked else None
        b_src = ins[1].links[0].from_node if ins[1].is_linked else None
        lm["a_image"] = a_src.image.name if a_src is not None and a_src.type == "TEX_IMAGE" else None
        lm["b_image"] = b_src.image.name if b_src is not None and b_src.type == "TEX_IMAGE" else None
        uv = b_src.inputs["Vector"].links[0].from_node if b_src and b_src.inputs["Vector"].is_linked else None
        lm["b_uv_map"] = uv.uv_map if uv is not None and uv.type == "UVMAP" else None
        me = [ob for ob in bpy.data.objects if ob.name.startswith("lit_quad")][0].data
        lm["uv_layers"] = [l.name for l in me.uv_layers]
        # the add-on's export path: Mix bypassed, material exported as imported
        undo = sc.bypass_lightmaps([mat])
        lm["bypassed_base_from"] = base.links[0].from_node.type if base.is_linked else None
        glb = os.path.join(WORK, "lit_quad_export.glb")
        addon.export_gltf(ctx, glb)
        sc.restore_lightmaps(undo)
        lm["restored"] = base.is_linked and base.links[0].from_node == mix
        doc = tools.gltf_json(glb)
        m0 = [m for m in doc["materials"] if m.get("name", "").startswith("WALL.0")][0]
        lm["export_base_texcoord"] = m0["pbrMetallicRoughness"]["baseColorTexture"].get("texCoord", 0)
        lm["export_occlusion_texcoord"] = m0.get("occlusionTexture", {}).get("texCoord")
    out["lightmap"] = lm
    for ob in [ob for ob in bpy.data.objects if ob.name.startswith("lit_quad")]:
        bpy.data.objects.remove(ob)

    # 6. render
    if render_png:
        out["render"] = render(coll, render_png)

    # 7. a broken model: the converter's error reaches the operator
    if bad_model:
        try:
            r = bpy.ops.import_scene.parkan_msh(filepath=bad_model)
            out["bad"] = {"result": list(r)}
        except RuntimeError as e:
            out["bad"] = {"error": str(e)}

    # 7b. two models in the file and none active: the export must ask which
    other = [m for m in listed if m["name"] != ENTRY][0]
    bpy.ops.import_scene.parkan_msh(filepath=ARCHIVE, entry_name=other["name"])
    ctx.view_layer.active_layer_collection = ctx.view_layer.layer_collection
    ctx.view_layer.objects.active = None
    try:
        r = bpy.ops.export_scene.parkan_msh(filepath=os.path.join(WORK, "ambiguous.msh"), mode="BASE")
        out["ambiguous"] = {"result": list(r)}
    except RuntimeError as e:
        out["ambiguous"] = {"error": str(e)}

    # 8. a whole game folder, then new models from it
    if demo_dir:
        bpy.ops.wm.read_factory_settings(use_empty=True)  # this also disables add-ons
        bpy.ops.preferences.addon_enable(module="io_scene_parkan")
        first = sorted(f for f in os.listdir(demo_dir) if f.lower().endswith(".rlb"))[0]
        r = bpy.ops.import_scene.parkan_msh(filepath=os.path.join(demo_dir, first), whole_folder=True)
        top = bpy.data.collections.get(os.path.basename(demo_dir))
        tree = {}

        def walk(c, d):
            d["objects"] = len(c.objects)
            d["msh"] = sc.idprop_dict(c["msh"]).get("source") if "msh" in c.keys() else None
            for ch in c.children:
                walk(ch, d.setdefault(ch.get("parkan_dir", ch.name), {}))
        if check(top is not None, "no folder collection"):
            walk(top, tree)
        out["folder"] = {"result": list(r), "tree": tree}
        new = os.path.join(WORK, "new.msh")
        r = bpy.ops.export_scene.parkan_msh(filepath=new, mode="NEW")
        out["new"] = {"result": list(r)}
        # The add-on never replaces a file unasked: again without consent is
        # refused (an error in Blender's UI), with "Replace existing file" it works.
        before = open(new, "rb").read()
        try:
            r = bpy.ops.export_scene.parkan_msh(filepath=new, mode="NEW")
            again = list(r)
        except RuntimeError as e:  # operator errors surface as RuntimeError in background mode
            again = ["ERROR", str(e)]
        out["new_again"] = {"result": again, "kept": open(new, "rb").read() == before}
        r = bpy.ops.export_scene.parkan_msh(filepath=new, mode="NEW", replace_file=True)
        out["new_replaced"] = {"result": list(r)}
        r = bpy.ops.export_scene.parkan_msh(filepath=os.path.join(WORK, "new_into.rlb"), mode="NEW",
                                            into=os.path.join(demo_dir, first), entry_name="NEWMODEL")
        out["new_into"] = {"result": list(r)}


def render(coll, path):
    """A small picture of the imported model at its mid frame."""
    import mathutils
    scene = bpy.context.scene
    scene.frame_set((scene.frame_start + scene.frame_end) // 2)
    bpy.context.view_layer.update()
    pts = [o.matrix_world @ mathutils.Vector(c) for o in coll.all_objects if o.type == "MESH"
           for c in o.bound_box]
    lo = mathutils.Vector([min(p[i] for p in pts) for i in range(3)])
    hi = mathutils.Vector([max(p[i] for p in pts) for i in range(3)])
    center, size = (lo + hi) / 2, max((hi - lo).length, 1e-3)
    cam = bpy.data.objects.new("cam", bpy.data.cameras.new("cam"))
    scene.collection.objects.link(cam)
    direction = mathutils.Vector((1.0, -1.3, 0.8)).normalized()
    cam.location = center + direction * size * 1.6
    cam.rotation_euler = (center - cam.location).to_track_quat("-Z", "Y").to_euler()
    cam.data.lens = 40
    scene.camera = cam
    sun = bpy.data.objects.new("sun", bpy.data.lights.new("sun", "SUN"))
    sun.rotation_euler = (0.7, 0.2, 0.9)
    scene.collection.objects.link(sun)
    if scene.world is None:
        scene.world = bpy.data.worlds.new("world")
    scene.world.color = (0.18, 0.2, 0.24)
    scene.render.resolution_x, scene.render.resolution_y = 480, 320
    scene.render.resolution_percentage = 100
    scene.render.image_settings.file_format = "PNG"
    scene.render.image_settings.color_mode = "RGB"
    scene.render.image_settings.compression = 100
    scene.render.filepath = path
    engines = []
    for engine in ("BLENDER_WORKBENCH", "BLENDER_EEVEE_NEXT", "BLENDER_EEVEE", "CYCLES"):
        try:
            scene.render.engine = engine
        except TypeError:
            continue
        if engine == "BLENDER_WORKBENCH":
            scene.display.shading.light = "STUDIO"
            scene.display.shading.color_type = "TEXTURE"
            scene.display.render_aa = "8"
        if engine == "CYCLES":
            scene.cycles.samples = 16
            scene.cycles.device = "CPU"
        try:
            bpy.ops.render.render(write_still=True)
        except RuntimeError as e:
            engines.append(f"{engine}: {str(e).splitlines()[-1]}")
            continue
        if os.path.isfile(path):
            return {"engine": engine, "file": path, "failed_engines": engines}
    return {"engine": None, "failed_engines": engines}


try:
    main()
except Exception:
    out["errors"].append(traceback.format_exc())
print("ADDON_TEST " + json.dumps(out), flush=True)
