"""Maps (Land.msh) in Blender: the game's ground shading from the terrain
material extras that msh2gltf writes (terrain-notes §3, §4.3).

    base  = clamp(tex(Land1[tex1], UV 1) * tex(micro1, UV 2) * 2)
    over  = clamp(tex(Land1[tex2], UV 1) * tex(micro2, UV 2) * 2)
    color = mix(base, over, COLOR_0.alpha)          (Res14)

Blender's glTF importer only loads images used by core material slots, so
the microtextures and the second material's textures are read from the
GLB's own buffer (`glb_images`) and packed. Water and liquid-bed materials
get `parkan_water` / `parkan_bed` custom properties and a blue viewport
colour. Node names (`parkan_base`, `parkan_micro`, `parkan_over`,
`parkan_over_micro`, `parkan_alpha`, `parkan_blend`) let tests and tools find them.
"""

import os
import tempfile

import bpy

try:
    from . import scene as sc
    from . import tools
except ImportError:  # loaded by scripts/blender_import_all.py from sys.path
    import scene as sc
    import tools


def glb_parts(path):
    """(json dict, BIN bytes) of a .glb (`tools.read_glb`)."""
    return tools.read_glb(path)


def terrain_materials(doc):
    """{glTF material name: its parkan_terrain extras}."""
    out = {}
    for m in doc.get("materials", []):
        t = (m.get("extras") or {}).get("parkan_terrain")
        if t is not None:
            out[m.get("name", "")] = t
    return out


class Images:
    """glTF texture index → packed Blender image, loaded on first use."""

    def __init__(self, doc, binary):
        self.doc, self.bin, self.cache = doc, binary, {}

    def get(self, tex):
        if tex is None:
            return None
        if tex in self.cache:
            return self.cache[tex]
        img = None
        try:
            t = self.doc["textures"][tex]
            im = self.doc["images"][t["source"]]
            name = im.get("name") or t.get("name") or f"tex{tex}"
            img = bpy.data.images.get(name)
            if img is None:
                v = self.doc["bufferViews"][im["bufferView"]]
                o = v.get("byteOffset", 0)
                png = self.bin[o:o + v["byteLength"]]
                fd, p = tempfile.mkstemp(suffix=".png")
                with os.fdopen(fd, "wb") as f:
                    f.write(png)
                img = bpy.data.images.load(p)
                img.name = name
                img.pack()
                os.remove(p)
        except (KeyError, IndexError, RuntimeError):
            img = None
        self.cache[tex] = img
        return img


def _tex_node(nodes, links, img, uv, name, x, y):
    n = nodes.new("ShaderNodeTexImage")
    n.name = n.label = name
    n.image = img
    n.location = (x, y)
    links.new(uv.outputs["UV"], n.inputs["Vector"])
    return n


def _layer(nodes, links, images, layer, uv0, uv1, prefix, y):
    """clamp(texture × microtexture × 2) of one layer; returns the output socket."""
    tex = images.get(layer.get("texture"))
    micro = images.get((layer.get("micro") or {}).get("texture"))
    t = _tex_node(nodes, links, tex, uv0, f"parkan_{prefix}", -900, y)
    if micro is None:
        return t.outputs["Color"]
    m = _tex_node(nodes, links, micro, uv1, f"parkan_{prefix}_micro" if prefix != "base" else "parkan_micro", -900, y - 300)
    mul, a, b, out = sc._mix_node(nodes)
    mul.location = (-600, y)
    links.new(t.outputs["Color"], a)
    links.new(m.outputs["Color"], b)
    x2, a2, b2, out2 = sc._mix_node(nodes)
    x2.name = x2.label = f"parkan_{prefix}_x2"
    x2.location = (-400, y)
    b2.default_value = (2.0, 2.0, 2.0, 1.0)
    for prop in ("clamp_result", "use_clamp"):
        if hasattr(x2, prop):
            setattr(x2, prop, True)
    links.new(out, a2)
    return out2


def wire_material(mat, ext, images, uv_names, color_name):
    """Builds the game's ground shading in `mat` from its terrain extras."""
    if not mat.use_nodes:
        mat.use_nodes = True
    tree = mat.node_tree
    nodes, links = tree.nodes, tree.links
    bsdf = sc.find_bsdf(tree)
    if bsdf is None or tree.nodes.get("parkan_blend") or tree.nodes.get("parkan_base_x2"):
        return False
    uv0 = nodes.new("ShaderNodeUVMap")
    uv0.uv_map = uv_names[0] if uv_names else ""
    uv0.location = (-1200, 200)
    uv1 = nodes.new("ShaderNodeUVMap")
    uv1.uv_map = uv_names[1] if len(uv_names) > 1 else uv0.uv_map
    uv1.location = (-1200, -200)
    base = dict(ext.get("base") or {})
    base["micro"] = ext.get("micro")
    color = _layer(nodes, links, images, base, uv0, uv1, "base", 300)
    over = ext.get("overlay")
    if over:
        o = _layer(nodes, links, images, over, uv0, uv1, "over", -400)
        vc = nodes.new("ShaderNodeVertexColor")
        vc.name = vc.label = "parkan_alpha"
        vc.layer_name = color_name or ""
        vc.location = (-600, -800)
        mix, a, b, out = sc._mix_node(nodes)
        mix.blend_type = "MIX"
        mix.name = mix.label = "parkan_blend"
        mix.location = (-200, 0)
        links.new(vc.outputs["Alpha"], mix.inputs[0])
        links.new(color, a)
        links.new(o, b)
        color = out
    # What Blender's glTF importer linked into Base Color (its texture, or
    # nothing: the factor is then the socket's value), put back for the
    # export by `bypass` so the glTF keeps the exported colour and texture.
    base_in = bsdf.inputs["Base Color"]
    src = base_in.links[0].from_socket if base_in.is_linked else None
    mat["parkan_gltf_base"] = src.node.name if src is not None else ""
    mat["parkan_gltf_base_out"] = list(src.node.outputs).index(src) if src is not None else 0
    links.new(color, base_in)
    mat["parkan_water"] = bool(ext.get("water"))
    mat["parkan_bed"] = bool(ext.get("bed"))
    if ext.get("water"):
        mat.diffuse_color = (0.3, 0.42, 1.0, 0.6)
    return True


def bypass(materials):
    """Takes the game's ground shading out of Base Color for an export:
    links back what Blender's glTF importer had there (`wire_material`
    recorded it), so the material goes out with the colour factor and
    texture it came in with and gltf2msh sees no material edit. Returns the
    undo list for `restore`."""
    undo = []
    for mat in materials:
        if mat is None or "parkan_gltf_base" not in mat.keys() or mat.node_tree is None:
            continue
        tree = mat.node_tree
        bsdf = sc.find_bsdf(tree)
        if bsdf is None or not bsdf.inputs["Base Color"].is_linked:
            continue
        base_in = bsdf.inputs["Base Color"]
        wired = base_in.links[0].from_socket
        tree.links.remove(base_in.links[0])
        node = tree.nodes.get(mat["parkan_gltf_base"]) if mat["parkan_gltf_base"] else None
        out = int(mat.get("parkan_gltf_base_out", 0))
        if node is not None and out < len(node.outputs):
            tree.links.new(node.outputs[out], base_in)
        undo.append((mat, wired))
    return undo


def restore(undo):
    """Links the game's ground shading back into Base Color after `bypass`."""
    for mat, wired in undo:
        tree = mat.node_tree
        base_in = sc.find_bsdf(tree).inputs["Base Color"]
        if base_in.is_linked:
            tree.links.remove(base_in.links[0])
        tree.links.new(wired, base_in)


def wire_map(glb, objects, materials):
    """Wires every terrain material among `materials` (just imported from
    `glb`); returns how many were wired."""
    doc, binary = glb_parts(glb)
    exts = terrain_materials(doc)
    if not exts:
        return 0
    images = Images(doc, binary)
    uv_names, color_name = [], None
    for o in objects:
        if o.type == "MESH":
            uv_names = [u.name for u in o.data.uv_layers]
            attrs = getattr(o.data, "color_attributes", None) or o.data.vertex_colors
            color_name = attrs[0].name if len(attrs) else None
            break
    n = 0
    for m in materials:
        ext = exts.get(m.name) or exts.get(m.name.rsplit(".", 1)[0])
        if ext is None and m.get("parkan_terrain"):
            ext = sc.idprop_dict(m["parkan_terrain"])
        if ext is not None and wire_material(m, ext, images, uv_names, color_name):
            n += 1
    return n
