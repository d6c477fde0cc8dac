"""Blender-side helpers: collections per model, animations, lightmaps.

Lightmaps: msh2gltf gives a lit material an `occlusionTexture` read through
TEXCOORD_1 (UV map 2). Blender's glTF importer only routes it into the
"glTF Settings"/"glTF Material Output" group (no effect on shading), so
`wire_lightmap` adds a Mix node (MULTIPLY, named `parkan_lightmap`) that
multiplies that image into Base Color. Before a glTF export the add-on takes
the Mix node out of the Base Color path (`bypass_lightmaps`) so that the
exporter sees the imported material unchanged, and puts it back afterwards.
"""

import bpy

try:
    from . import compat
    from . import tools
except ImportError:  # a plain module on sys.path (scripts/blender_import_all.py)
    import compat
    import tools

LIGHTMAP_NODE = "parkan_lightmap"


def collection_for(parts, root):
    """The nested collection root/parts[0]/parts[1]/..., created on demand.
    Children are found by the folder name they were made for (Blender
    renames a collection whose name is taken elsewhere, e.g. `demo.001`)."""
    parent = root
    for part in parts:
        child = next((c for c in parent.children if c.get("parkan_dir") == part), None)
        if child is None:
            child = bpy.data.collections.new(part)
            child["parkan_dir"] = part
            parent.children.link(child)
        parent = child
    return parent


def new_collection(name, parent):
    """A new child collection of `parent` (Blender adds .001 when the name is taken)."""
    c = bpy.data.collections.new(name)
    parent.children.link(c)
    return c


def move_to_collection(objects, coll):
    """Links the objects into `coll` only (Blender 3.4's glTF importer links
    into the scene's master collection whatever is active)."""
    for o in objects:
        if coll not in o.users_collection:
            coll.objects.link(o)
        for c in list(o.users_collection):
            if c != coll:
                c.objects.unlink(o)


def layer_collection(layer, coll):
    if layer.collection == coll:
        return layer
    for c in layer.children:
        found = layer_collection(c, coll)
        if found is not None:
            return found
    return None


def set_active_collection(context, coll):
    lc = layer_collection(compat.layer_root(context.view_layer), coll)
    if lc is not None:
        context.view_layer.active_layer_collection = lc
    return lc


def activate_animations(objects):
    """Blender makes only the first glTF animation active; msh2gltf writes one
    per model, but a second import of the same file leaves it stashed.
    Returns the last frame over the objects' actions (0 without animation)."""
    end = 0
    for o in objects:
        ad = o.animation_data
        if ad is None:
            continue
        if ad.action is None:
            for track in ad.nla_tracks:
                if track.strips:
                    ad.action = track.strips[0].action
                    track.mute = True
                    break
        if ad.action is not None:
            end = max(end, int(round(ad.action.frame_range[1])))
    return end


def _upstream_image(socket, depth=0):
    """The first Image Texture node feeding `socket` (through a few nodes)."""
    if depth > 6 or not socket.is_linked:
        return None
    node = socket.links[0].from_node
    if node.type == "TEX_IMAGE":
        return node
    for s in node.inputs:
        found = _upstream_image(s, depth + 1)
        if found is not None:
            return found
    return None


def _color_socket(node, inputs, name):
    socks = node.inputs if inputs else node.outputs
    for s in socks:
        if s.name == name and s.type == "RGBA" and s.enabled:
            return s
    for s in socks:
        if s.name == name and s.type == "RGBA":
            return s
    return None


def _mix_node(nodes):
    """A colour Mix node set to MULTIPLY: ShaderNodeMix (3.4+), else MixRGB."""
    try:
        n = nodes.new("ShaderNodeMix")
        n.data_type = "RGBA"
        a, b, out = _color_socket(n, True, "A"), _color_socket(n, True, "B"), _color_socket(n, False, "Result")
    except RuntimeError:
        n = nodes.new("ShaderNodeMixRGB")
        a, b, out = n.inputs["Color1"], n.inputs["Color2"], n.outputs["Color"]
    n.blend_type = "MULTIPLY"
    n.inputs[0].default_value = 1.0
    return n, a, b, out


def find_bsdf(tree):
    for n in tree.nodes:
        if n.type == "BSDF_PRINCIPLED":
            return n
    return None


def find_lightmap_image(tree):
    """The Image Texture node that feeds the glTF settings group's Occlusion input."""
    for n in tree.nodes:
        if n.type == "GROUP" and "Occlusion" in n.inputs:
            img = _upstream_image(n.inputs["Occlusion"])
            if img is not None:
                return img
    return None


def wire_lightmap(mat):
    """Multiplies the material's lightmap (its occlusion image, UV map 2) into
    Base Color with a MULTIPLY Mix node. Returns True when wired (or already)."""
    if not mat.use_nodes or mat.node_tree is None:
        return False
    tree = mat.node_tree
    if LIGHTMAP_NODE in tree.nodes:
        return True
    bsdf = find_bsdf(tree)
    img = find_lightmap_image(tree)
    if bsdf is None or img is None:
        return False
    base = bsdf.inputs["Base Color"]
    mix, a, b, out = _mix_node(tree.nodes)
    mix.name = LIGHTMAP_NODE
    mix.label = "Lightmap (multiply)"
    mix.location = (bsdf.location.x - 200, bsdf.location.y + 150)
    if base.is_linked:
        tree.links.new(base.links[0].from_socket, a)
    else:
        a.default_value = base.default_value[:]
    tree.links.new(img.outputs["Color"], b)
    tree.links.new(out, base)
    # The game modulates in display space: read the page as sRGB (the
    # occlusion path the exporter reads ignores the colour space).
    if img.image is not None:
        try:
            img.image.colorspace_settings.name = "sRGB"
        except TypeError:
            pass
    return True


def bypass_lightmaps(materials):
    """Takes the lightmap Mix nodes out of the Base Color path; returns an undo list."""
    undo = []
    for mat in materials:
        if mat is None or not mat.use_nodes or mat.node_tree is None:
            continue
        tree = mat.node_tree
        mix = tree.nodes.get(LIGHTMAP_NODE)
        bsdf = find_bsdf(tree)
        if mix is None or bsdf is None:
            continue
        base = bsdf.inputs["Base Color"]
        if not base.is_linked or base.links[0].from_node != mix:
            continue
        a = [s for s in mix.inputs if s.type == "RGBA" and s.enabled][0]
        tree.links.remove(base.links[0])
        if a.is_linked:
            tree.links.new(a.links[0].from_socket, base)
        else:
            old = base.default_value[:]
            base.default_value = a.default_value[:]
            undo.append((mat, old))
            continue
        undo.append((mat, None))
    return undo


def restore_lightmaps(undo):
    for mat, old in undo:
        tree = mat.node_tree
        mix = tree.nodes.get(LIGHTMAP_NODE)
        bsdf = find_bsdf(tree)
        if mix is None or bsdf is None:
            continue
        base = bsdf.inputs["Base Color"]
        if base.is_linked:
            tree.links.remove(base.links[0])
        if old is not None:
            base.default_value = old
        out = [s for s in mix.outputs if s.type == "RGBA" and s.enabled][0]
        tree.links.new(out, base)


def idprop_dict(v):
    """An ID property (group) as plain Python data."""
    if hasattr(v, "to_dict"):
        return v.to_dict()
    if hasattr(v, "to_list"):
        return v.to_list()
    return v


def msh_props(o):
    """An object's `msh` custom property (the node's glTF extras) as a dict;
    Blender's importer may keep a nested dict as its JSON or repr text
    (read by `tools.parse_text`: ToolError over its bounds)."""
    v = o.get("msh")
    if v is None:
        return {}
    v = tools.parse_text(idprop_dict(v), f"object {o.name}: custom property msh")
    return v if isinstance(v, dict) else {}


class Staging:
    """An empty scene each model of an import is read into, so that
    Blender's glTF importer works in a scene of one model: in the user's
    scene every object it links, selects and names costs time in
    proportion to the objects already there (a game folder: 493 s through
    the importer into one scene, 113 s staged). `take` then moves the
    model's collection into the user's scene. The staged scene has the
    user scene's frame rate, start frame and units (the importer reads
    them); `remove` deletes it."""

    def __init__(self, scene):
        st = bpy.data.scenes.new("parkan_import")
        st.render.fps, st.render.fps_base = scene.render.fps, scene.render.fps_base
        st.frame_start, st.frame_end = scene.frame_start, scene.frame_end
        st.unit_settings.system = scene.unit_settings.system
        st.unit_settings.scale_length = scene.unit_settings.scale_length
        self.scene = st

    def import_gltf(self, glb, coll):
        """Imports `glb` into `coll` (a new collection, not yet in any
        scene); returns (the objects made, the glTF scene extras `msh` as
        the importer stored them or None). Raises what the importer
        raises (RuntimeError)."""
        st = self.scene
        st.collection.children.link(coll)
        vl = st.view_layers[0]
        vl.active_layer_collection = layer_collection(compat.layer_root(vl), coll)
        if "msh" in st.keys():
            del st["msh"]
        try:
            with bpy.context.temp_override(scene=st, view_layer=vl):
                compat.gltf_import(glb)
        finally:
            objs = list(st.objects)
        return objs, st.get("msh")

    def take(self, objects, coll, parent):
        """Moves `objects` into `coll` only and `coll` from the staged
        scene under `parent` (a collection of the user's scene)."""
        move_to_collection(objects, coll)
        self.scene.collection.children.unlink(coll)
        for o in list(self.scene.collection.objects):
            self.scene.collection.objects.unlink(o)
        parent.children.link(coll)

    def drop(self, coll):
        """After a failed import: `coll` and what the importer left."""
        for o in list(self.scene.collection.objects):
            self.scene.collection.objects.unlink(o)
        if coll.name in self.scene.collection.children:
            self.scene.collection.children.unlink(coll)
        bpy.data.collections.remove(coll)

    def remove(self):
        if self.scene is not None:
            bpy.data.scenes.remove(self.scene)
            self.scene = None
