"""One Blender image per library texture (issue 24 item 6).

msh2gltf embeds each texture a model uses in that model's GLB, named after
its library entry (`TX05_8888.0`, lightmaps `LM001.0`, map textures
`L02.0`), so Blender's glTF importer makes one image per model that uses it
(`TX05_8888.0.001`, or `TX05_8888`: Blender reads `.0` as a number suffix),
so a game folder gave 978 images for 136 textures. `SharedImages.share`
runs after each model's import: an image whose key (its library name, read
from the GLB's image of the same bytes, and the SHA-1 of its packed bytes)
is already in the file is replaced in the model's material nodes by the
image that has it, and removed. The image kept carries the
key as its custom property `parkan_texture`, so a later import into the
same file shares it too. Painting a shared image changes every model that
uses it, as the texture does in the game (gltf2msh's report lists the
other models that use an edited texture).
"""

import hashlib
import re
import struct

import bpy

from .terrain import glb_parts

KEY = "parkan_texture"
_SUFFIX = re.compile(r"\.\d{3}$")


def library_name(name):
    """`name` without Blender's duplicate suffix (`TX05_8888.0.001` → `TX05_8888.0`)."""
    return _SUFFIX.sub("", name)


def glb_image_names(glb):
    """{SHA-1 of an image's bytes: [its glTF names]} of the images in a GLB
    (two library textures may hold the same pixels)."""
    try:
        doc, binary = glb_parts(glb)
    except (OSError, ValueError, struct.error):
        return {}
    out = {}
    for im in doc.get("images", []):
        try:
            v = doc["bufferViews"][im["bufferView"]]
        except (KeyError, IndexError, TypeError):
            continue
        o = v.get("byteOffset", 0)
        digest = hashlib.sha1(binary[o:o + v.get("byteLength", 0)]).hexdigest()
        names = out.setdefault(digest, [])
        if im.get("name") and im["name"] not in names:
            names.append(im["name"])
    return out


def _stem(name):
    """`name` without any trailing `.<digits>` groups (`L23M.0.001` → `L23M`)."""
    while True:
        head, dot, tail = name.rpartition(".")
        if not dot or not head or not tail.isdigit():
            return name
        name = head


def image_key(img, names):
    """`NAME#SHA1` of a packed image: its library name (of `names`, the
    GLB's names for those bytes, the one Blender's name was made from;
    else the image's name without `.001`) and its bytes; None for an image
    that is not packed (a file on disk, a generated image)."""
    pf = img.packed_file
    if pf is None:
        return None
    digest = hashlib.sha1(bytes(pf.data)).hexdigest()
    cands = names.get(digest) or []
    name = next((n for n in cands if n == img.name), None) \
        or next((n for n in cands if _stem(n) == _stem(img.name)), None) \
        or library_name(img.name)
    return f"{name}#{digest}"


def _tex_nodes(tree, seen):
    """Every Image Texture node of `tree` and of the node groups it uses."""
    if tree is None or tree.as_pointer() in seen:
        return
    seen.add(tree.as_pointer())
    for n in tree.nodes:
        if n.type == "TEX_IMAGE":
            yield n
        elif n.type == "GROUP":
            yield from _tex_nodes(n.node_tree, seen)


def material_images(materials):
    """The images of the Image Texture nodes of `materials`, each once."""
    out, seen = [], set()
    for m in materials:
        if m is None or not m.use_nodes:
            continue
        for n in _tex_nodes(m.node_tree, seen):
            if n.image is not None and n.image not in out:
                out.append(n.image)
    return out


def count():
    """Images in the file that are pictures (not Render Result, Viewer Node)."""
    return sum(1 for i in bpy.data.images if i.type == "IMAGE")


class SharedImages:
    """The images of one import run, by key; `removed` counts the
    duplicates dropped."""

    def __init__(self):
        self.by_key = None
        self.removed = 0

    def _index(self):
        self.by_key = {}
        for img in bpy.data.images:
            k = img.get(KEY)
            if k and k not in self.by_key:
                self.by_key[k] = img

    def share(self, glb, materials, images):
        """Points the Image Texture nodes of `materials` (just imported from
        `glb`) at the image already in the file for each of `images` (just
        imported) and removes the duplicates; returns how many were
        removed. An image kept gets its library name when it is free."""
        if self.by_key is None:
            self._index()
        names = glb_image_names(glb)
        swap = {}
        for img in images:
            k = image_key(img, names)
            if k is None:
                continue
            kept = self.by_key.get(k)
            if kept is None or kept == img:
                img[KEY] = k
                self.by_key[k] = img
                name = k.rpartition("#")[0]
                if name and img.name != name and bpy.data.images.get(name) is None:
                    img.name = name
            else:
                swap[img] = kept
        if not swap:
            return 0
        seen = set()
        for m in materials:
            if m is None or not m.use_nodes:
                continue
            for n in _tex_nodes(m.node_tree, seen):
                if n.image in swap:
                    n.image = swap[n.image]
        n = 0
        for dup, kept in swap.items():
            if dup.users:  # used outside the materials' nodes: Blender finds the users
                dup.user_remap(kept)
            bpy.data.images.remove(dup)
            n += 1
        self.removed += n
        return n
