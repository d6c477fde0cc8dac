"""The game's objects as a Blender asset library (issue 37 item 1).

File > Import > Parkan: build the game's asset library
(`parkan.build_asset_library`): `msh2gltf GAME --asset-library DIR`
writes one GLB per placeable object of the game folder (every
objects.rlb scenery record, every building and unit .dat) with its
placement template (`extras.parkan_asset`); this module imports each,
joins its model into one mesh object carrying the template as the custom
property `parkan_asset`, marks it an asset (`ID.asset_mark()`) in its
catalog (kind, then archive or class: `blender_assets.cats.txt` beside the
.blend), renders its preview (Workbench, 128 px: `render_preview`;
`asset_generate_preview()` renders only later, from a window's job,
after the objects are gone), writes
`parkan_assets.blend` and registers the folder as the asset library
"Parkan <game>" in the preferences. Made once per game folder: a second
run with the same files (names, sizes, times of objects.rlb, UNITS,
MISSIONS, the archives, and the converter) reuses the cache.

Drag an asset from the Asset Browser into an imported mission (or append
it by script: `append_asset`), put it into a clan's collection (or set its
`parkan_owner`), and File > Export > Parkan mission writes it as a new
placed object (a fresh logical id; gltf2msh refuses a building or unit with
no owner, and any model path the game does not have: `mission.resolve`).

Object properties > Parkan model (`parkan.change_model`): a placed or new
object's model chosen among the registry's records of its kind (the
library's `index.json`), not typed.
"""

import hashlib
import json
import os
import shutil
import uuid

import bpy
from bpy.props import EnumProperty, StringProperty

from . import compat
from . import scene as sc
from . import tools

ASSET = "parkan_asset"
BLEND = "parkan_assets.blend"
CATS = "blender_assets.cats.txt"
STAMP = "stamp.json"
KIND_OF_GROUP = {"Buildings": 0, "Units": 1, "Vegetation": 2, "Rocks": 3}


def cache_root():
    """Where libraries are cached: Blender's user data folder /
    parkan_assets."""
    return bpy.utils.user_resource("DATAFILES", path="parkan_assets", create=True)


def library_dir(game, root=None):
    """The cache folder of game folder `game` (one per absolute path)."""
    key = hashlib.sha1(os.path.normcase(os.path.abspath(game)).encode("utf-8")).hexdigest()[:12]
    name = os.path.basename(os.path.normpath(game)) or "game"
    return os.path.join(root or cache_root(), f"{name}_{key}")


def fingerprint(game, m2g):
    """A digest of what the library is made from: the game folder's
    top-level files (archives, libraries), every file under UNITS and
    MISSIONS (names, sizes, modification times) and the converter."""
    h = hashlib.sha256()
    items = []
    for f in sorted(os.listdir(game)):
        p = os.path.join(game, f)
        if os.path.isfile(p):
            items.append(p)
        elif f.lower() in ("units", "missions"):
            for d, dirs, files in os.walk(p):
                dirs.sort()
                items += [os.path.join(d, x) for x in sorted(files)]
    for p in items + [m2g]:
        st = os.stat(p)
        h.update(f"{os.path.relpath(p, game)}|{st.st_size}|{st.st_mtime_ns}\n".encode("utf-8"))
    return h.hexdigest()


def catalog_ids(catalogs):
    """{catalog path: UUID} for every catalog and its parents (stable per
    path)."""
    out = {}
    for c in sorted(catalogs):
        parts = c.split("/")
        for i in range(1, len(parts) + 1):
            p = "/".join(parts[:i])
            out.setdefault(p, str(uuid.uuid5(uuid.NAMESPACE_URL, "parkan:" + p)))
    return out


def write_catalogs(path, ids):
    """blender_assets.cats.txt (Blender's catalog definition file, version 1)."""
    lines = ["# This is an Asset Catalog Definition file for Blender.", "#",
             "# Written by the Parkan add-on (io_scene_parkan.assets).", "", "VERSION 1", ""]
    for p, u in sorted(ids.items()):
        lines.append(f"{u}:{p}:{p.replace('/', '-')}")
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")


def descendants(o):
    out, stack = [], [o]
    while stack:
        x = stack.pop()
        out.append(x)
        stack.extend(x.children)
    return out


def join_model(context, root, name):
    """The model under `root` (the asset GLB's root) as one mesh object
    named `name` in the root's frame, carrying the root's `parkan_asset`;
    every other object of the import removed. Returns it (None when the
    model has no mesh)."""
    objs = descendants(root)
    meshes = [o for o in objs if o.type == "MESH" and o.data is not None]
    root_value = sc.idprop_dict(root.get(ASSET))
    template = tools.parse_text(root_value, f"{root.name}: {ASSET}")
    if not meshes:
        return None
    for o in meshes:
        o.data = o.data.copy()
    names = [o.name for o in objs]
    root_world = root.matrix_world.copy()
    target = meshes[0]
    tname = target.name
    if len(meshes) > 1:
        with compat.override(context, active_object=target, object=target,
                             selected_objects=meshes, selected_editable_objects=meshes):
            bpy.ops.object.join()
    # The join removed the other meshes' objects: look up by name.
    target = bpy.data.objects[tname]
    world = root_world.inverted() @ target.matrix_world
    target.parent = None
    target.data.transform(world)
    target.matrix_world = root_world
    for n in names:
        if n != tname and n in bpy.data.objects:
            bpy.data.objects.remove(bpy.data.objects[n], do_unlink=True)
    target.name = name
    target.data.name = name
    # As the importer kept it: a group, or text when a word does not fit
    # an ID property (over 2**31: Type words, float bits).
    raw = root_value
    target[ASSET] = raw if isinstance(raw, str) else template
    return target


def render_preview(o, png, size=128):
    """Renders `o` from above at an angle with Workbench into `png` and
    makes it `o`'s preview (`ID.preview_ensure()`, written with the asset
    into the .blend). Returns 1, or 0 when this Blender cannot render here
    (no GPU context): the Asset Browser then shows the type's icon."""
    from mathutils import Vector
    scene = bpy.data.scenes.new("parkan_preview")
    cam = bpy.data.objects.new("parkan_preview", bpy.data.cameras.new("parkan_preview"))
    img = None
    try:
        scene.render.engine = compat.render_engine_workbench()
        scene.render.resolution_x = scene.render.resolution_y = size
        scene.render.resolution_percentage = 100
        scene.render.film_transparent = True
        scene.render.image_settings.file_format = "PNG"
        scene.render.filepath = png
        scene.collection.objects.link(o)
        scene.collection.objects.link(cam)
        scene.camera = cam
        corners = [o.matrix_world @ Vector(c) for c in o.bound_box]
        centre = sum(corners, Vector()) / 8.0
        radius = max(max((c - centre).length for c in corners), 1e-3)
        cam.location = centre + Vector((1.0, -1.0, 0.8)).normalized() * radius * 2.6
        cam.rotation_euler = (centre - cam.location).to_track_quat("-Z", "Y").to_euler()
        cam.data.clip_start = radius * 0.01
        cam.data.clip_end = radius * 10.0
        os.makedirs(os.path.dirname(png), exist_ok=True)
        bpy.ops.render.render(write_still=True, scene=scene.name)
        img = bpy.data.images.load(png)
        pv = o.preview_ensure()
        pv.image_size = tuple(img.size)
        pv.image_pixels_float[:] = img.pixels[:]
        return 1
    except (RuntimeError, OSError, ValueError, TypeError, AttributeError):
        return 0
    finally:
        if o.name in scene.collection.objects:
            scene.collection.objects.unlink(o)
        data = cam.data
        bpy.data.objects.remove(cam)
        bpy.data.cameras.remove(data)
        bpy.data.scenes.remove(scene)
        if img is not None:
            bpy.data.images.remove(img)


def build_blend(context, lib, index):
    """Imports every asset GLB of library folder `lib` (its `index`),
    marks each an asset in its catalog, writes `lib/parkan_assets.blend`
    and the catalogs, and removes what it imported from this file.
    Returns (assets written, previews asked, names failed)."""
    ids = catalog_ids(a["catalog"] for a in index.get("assets", []))
    write_catalogs(os.path.join(lib, CATS), ids)
    before = {k: set(getattr(bpy.data, k)) for k in
              ("objects", "meshes", "materials", "images", "collections", "textures")}
    top = context.scene.collection
    tmp = sc.new_collection("parkan_asset_build", top)
    old_active = context.view_layer.active_layer_collection
    done, failed, previews = [], [], 0
    try:
        sc.set_active_collection(context, tmp)
        for a in index.get("assets", []):
            seen = set(bpy.data.objects)
            try:
                compat.gltf_import(os.path.join(lib, a["file"]))
            except RuntimeError as e:
                failed.append(f"{a['name']}: Blender's glTF import failed: {e}")
                continue
            new = [o for o in bpy.data.objects if o not in seen]
            sc.move_to_collection(new, tmp)
            roots = [o for o in new if ASSET in o.keys()]
            if not roots:
                failed.append(f"{a['name']}: no node with {ASSET} in {a['file']}")
                continue
            o = join_model(context, roots[0], a["name"])
            if o is None:
                failed.append(f"{a['name']}: its model has no mesh")
                continue
            o.asset_mark()
            o.asset_data.catalog_id = ids[a["catalog"]]
            o.asset_data.description = f"{a['path']} (kind {a['kind']})"
            previews += render_preview(o, os.path.join(lib, "previews", a["name"] + ".png"))
            done.append(o)
        bpy.data.libraries.write(os.path.join(lib, BLEND), set(done), fake_user=True)
    finally:
        context.view_layer.active_layer_collection = old_active
        for k, had in before.items():
            coll = getattr(bpy.data, k)
            for x in [x for x in coll if x not in had]:
                coll.remove(x)
    return len(done), previews, failed


def register_library(context, game, lib):
    """The asset library "Parkan <game>" at `lib` in the preferences
    (added, or its folder updated). Returns its name."""
    name = f"Parkan {os.path.basename(os.path.normpath(game)) or 'game'}"
    compat.asset_library(context, name, lib)
    return name


def load_index(lib):
    with open(os.path.join(lib, "library", "index.json"), encoding="utf-8") as f:
        return json.load(f)


def build(context, game, m2g, root=None, rebuild=False, on_line=None):
    """The library of `game` (module docs), reused when cached. Returns
    (library folder, index, "built" or "cached", assets, previews, failed
    texts)."""
    lib = library_dir(game, root)
    stamp = fingerprint(game, m2g)
    stamp_path = os.path.join(lib, STAMP)
    if not rebuild and os.path.isfile(stamp_path) and os.path.isfile(os.path.join(lib, BLEND)):
        with open(stamp_path, encoding="utf-8") as f:
            old = json.load(f)
        if old.get("fingerprint") == stamp:
            return lib, load_index(lib), "cached", old.get("assets", 0), old.get("previews", 0), []
    if os.path.isdir(lib):
        shutil.rmtree(lib)
    os.makedirs(lib)
    out = os.path.join(lib, "library")
    code, err = tools.run([m2g, game, "--asset-library", out, "--force"], on_line)
    if not os.path.isfile(os.path.join(out, "index.json")):
        raise tools.ToolError(tools.last_error(err) or f"msh2gltf exited with {code}")
    index = load_index(lib)
    failed = [f"{f['path']}: {f['error']}" for f in index.get("failed", [])]
    n, previews, bad = build_blend(context, lib, {
        "assets": [dict(a, file=os.path.join("library", a["file"])) for a in index["assets"]]})
    failed += bad
    with open(stamp_path, "w", encoding="utf-8") as f:
        json.dump({"fingerprint": stamp, "game": os.path.abspath(game), "assets": n,
                   "previews": previews}, f)
    return lib, index, "built", n, previews, failed


def append_asset(lib, name, collection):
    """Appends asset `name` of library folder `lib` (as dragging it from
    the Asset Browser does) into `collection`; returns the new object."""
    path = os.path.join(lib, BLEND)
    with bpy.data.libraries.load(path, link=False) as (src, dst):
        if name not in src.objects:
            raise tools.ToolError(f"{name}: not an asset of {path}")
        dst.objects = [name]
    o = dst.objects[0]
    collection.objects.link(o)
    return o


class PARKAN_OT_build_asset_library(tools.RunsTools, bpy.types.Operator):
    """Make the game folder's buildings, units, trees and rocks an asset library (once per game
    folder; cached): drag them from the Asset Browser into an imported mission"""
    bl_idname = "parkan.build_asset_library"
    bl_label = "Build the game's asset library"
    bl_options = {"REGISTER"}

    game_dir: StringProperty(name="Game folder", subtype="DIR_PATH", default="",
                             description="The game folder (objects.rlb, UNITS, MISSIONS); "
                                         "empty: the add-on preferences' game folder")
    cache_dir: StringProperty(name="Cache folder", subtype="DIR_PATH", default="",
                              description="Where libraries are kept (empty: Blender's user "
                                          "data folder / parkan_assets)")
    rebuild: bpy.props.BoolProperty(name="Rebuild", default=False,
                                    description="Make it again even when the game folder is unchanged")

    def invoke(self, context, event):
        return context.window_manager.invoke_props_dialog(self)

    def run(self, context):
        from . import binary, game_dir
        game = game_dir(context, self.game_dir)
        if not game or not os.path.isdir(game):
            raise tools.ToolError("choose the game folder (objects.rlb, UNITS, MISSIONS)")
        m2g = binary(context, "msh2gltf")
        lib, index, how, n, previews, failed = build(
            context, game, m2g, bpy.path.abspath(self.cache_dir) or None, self.rebuild)
        name = register_library(context, game, lib)
        context.window_manager["parkan_asset_library"] = lib
        cats = len(index.get("catalogs", []))
        self.report({"INFO"}, f"Asset library {name} ({how}): {n} assets in {cats} catalogs, "
                              f"{previews} previews, at {lib}")
        self.report_warnings(context, failed)
        return {"FINISHED"}


def _records(self, context):
    """The model choices of the active object's kind (the library's
    index.json records), as enum items; kept alive in `_records.items`."""
    o = context.active_object
    x = object_record(o)
    lib = context.window_manager.get("parkan_asset_library", "")
    items = []
    try:
        index = load_index(lib) if lib else {}
    except (OSError, ValueError):
        index = {}
    kind = x.get("kind") if x else None
    key = "dat" if kind in (0, 1) else "scenery"
    by_kind = {a["path"]: a["kind"] for a in index.get("assets", [])}
    for p in index.get("records", {}).get(key, []):
        if kind in (0, 1) and by_kind.get(p, kind) != kind:
            continue
        items.append((p, p, f"kind {by_kind.get(p, kind)}"))
    _records.items = items or [("", "(build the game's asset library first)", "")]
    return _records.items


def object_record(o):
    """(the dict) of `o`'s `parkan_object` or `parkan_asset`, or {}."""
    if o is None:
        return {}
    for k in ("parkan_object", ASSET):
        v = o.get(k)
        if v is not None:
            v = tools.parse_text(sc.idprop_dict(v), f"object {o.name}: {k}")
            if isinstance(v, dict):
                return v
    return {}


def set_model(o, path):
    """Sets the model path of placed or new object `o` (its
    parkan_object's or parkan_asset's `path`; a raw `path_b64` dropped).
    Returns the old path."""
    for k in ("parkan_object", ASSET):
        if o.get(k) is not None:
            v = tools.parse_text(sc.idprop_dict(o[k]), f"object {o.name}: {k}")
            old = v.get("path")
            v["path"] = path
            v.pop("path_b64", None)
            # Text when it was text (words over 2**31 fit no ID property).
            o[k] = json.dumps(v) if isinstance(o[k], str) else v
            return old
    raise tools.ToolError(f"{o.name}: not a placed object of a mission")


class PARKAN_OT_change_model(tools.RunsTools, bpy.types.Operator):
    """Change the active placed object's model to another of the game's records of its kind"""
    bl_idname = "parkan.change_model"
    bl_label = "Change model"
    bl_options = {"REGISTER", "UNDO"}
    bl_property = "model"

    model: EnumProperty(name="Model", items=_records)

    def invoke(self, context, event):
        context.window_manager.invoke_search_popup(self)
        return {"RUNNING_MODAL"}

    def run(self, context):
        o = context.active_object
        if not self.model:
            raise tools.ToolError("no model chosen: build the game's asset library first")
        old = set_model(o, self.model)
        self.report({"INFO"}, f"{o.name}: model {old} -> {self.model} (written on export; "
                              f"the shown mesh stays until the mission is imported again)")
        return {"FINISHED"}


class PARKAN_PT_object(bpy.types.Panel):
    """Object properties > Parkan model: kind, model path and the change."""
    bl_label = "Parkan model"
    bl_space_type = "PROPERTIES"
    bl_region_type = "WINDOW"
    bl_context = "object"

    @classmethod
    def poll(cls, context):
        return bool(object_record(context.active_object))

    def draw(self, context):
        x = object_record(context.active_object)
        col = self.layout.column()
        col.label(text=f"Kind {x.get('kind')}: {x.get('path')}")
        col.operator(PARKAN_OT_change_model.bl_idname, icon="VIEWZOOM")
        col.operator(PARKAN_OT_build_asset_library.bl_idname, icon="ASSET_MANAGER")


def menu_import(self, context):
    self.layout.operator(PARKAN_OT_build_asset_library.bl_idname,
                         text="Parkan: build the game's asset library")


classes = (PARKAN_OT_build_asset_library, PARKAN_OT_change_model, PARKAN_PT_object)
