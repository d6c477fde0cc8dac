"""Every difference between the Blender versions the add-on supports in
one place (README "Tested": Debian's 3.4.1, 4.2 LTS, 4.5 LTS, 5.0 and the
newest, 5.3): the rest of the add-on calls these and never reads
`bpy.app.version` itself. Tested in each version by the Blender tests
(the full suite in 3.4.1 and 5.3, tests/shared_blender_matrix.rs and the
`*_in_each_matrix_bpy` tests in 4.2, 4.5 and 5.0).

What differs, and where it is handled:

- glTF importer options (`gltf_import`; compared option by option in
  3.4.1, 4.2.23, 4.5.15, 5.0.1 and 5.3.0): 4.2 renamed
  `convert_lighting_mode`; 4.5 has `import_scene_as_collection` and
  `import_merge_material_slots` (both on by default) and
  `import_scene_extras`, which 4.2 has not. The add-on imports into its
  own collections and keeps one material slot per glTF primitive, as 3.4
  and 4.2 do.
- glTF exporter options (`gltf_export`): 4.2 has `export_animation_mode`
  (the add-on exports the active actions only; 3.4's equivalent is
  `export_nla_strips=False`), `export_vertex_color` and more, 4.5
  `export_merge_animation`, 5.3 drops `export_image_add_webp`; options a
  version does not know are left out.
- Layered actions (`fcurves`, `action_slot`): from 4.4 an action holds a
  slot per object and the glTF importer makes one action per glTF
  animation shared by the objects; 4.5 still has `Action.fcurves` (the
  legacy API), but as the first slot's curves only, and 5.0 removed it.
- View layers (`layer_root`): 5.3 builds a new scene's layer tree lazily.
- numpy (`numpy_shim`): 3.4's importer uses `np.bool`, gone in numpy 1.24.
- Custom properties: every version may keep a nested glTF extra as its
  Python text (a big integer, mixed lists); `tools.parse_text` reads it
  back the same way in each.
- Add-on or extension: 3.4 .. 4.1 install the zip as a legacy add-on
  (`bl_info` in `__init__`), 4.2+ as an extension (`blender_manifest.toml`).
"""

import bpy


def numpy_shim():
    """Blender 3.4's glTF importer uses np.bool, which numpy 1.24 removed.
    Only for Blender < 3.6, and without touching `numpy.bool` first: in numpy
    1.24..1.26 even `hasattr(numpy, "bool")` prints a FutureWarning."""
    if bpy.app.version >= (3, 6, 0):
        return
    try:
        import numpy
    except ImportError:
        return
    if "bool" not in vars(numpy):  # numpy 2.x defines it again
        numpy.bool = bool



def layer_root(view_layer):
    """`view_layer`'s root LayerCollection (the tree `scene.layer_collection`
    searches). Blender 5.3 builds the layer tree of a new scene (the
    import's staging scene) lazily: `view_layer.layer_collection` is None
    until something syncs it, and reading `active_layer_collection` does
    (cheaply; `view_layer.update()` would evaluate the depsgraph too).
    Earlier versions have it at once."""
    root = view_layer.layer_collection
    if root is None:
        view_layer.active_layer_collection  # noqa: B018 (syncs the layer tree)
        root = view_layer.layer_collection
    if root is None:
        view_layer.update()
        root = view_layer.layer_collection
    return root


def action_slot(holder):
    """The action slot of `holder` (an object's AnimData or an NLA strip):
    Blender 4.4+'s layered actions keep one channel bag per slot; None
    before 4.4 (one action per object, no slots)."""
    return getattr(holder, "action_slot", None)


def fcurves(act, slot=None):
    """The F-curves of `act` for the object `slot` stands for.

    Up to Blender 4.3 an action is one object's: `Action.fcurves`. From
    4.4 actions are layered: the glTF importer makes one action per glTF
    animation with a slot per object, and each slot's F-curves are in its
    channel bag. 4.5 still has `Action.fcurves` (the legacy API), but it is the
    first slot's channel bag whatever the slot (every object would get the
    first object's curves); 5.0 removed it. So: the slot's channel bag when
    the action has slots and a slot is given, else `Action.fcurves`."""
    if act is None:
        return []
    if slot is not None and getattr(act, "slots", None) is not None:
        try:
            from bpy_extras import anim_utils
            bag = anim_utils.action_get_channelbag_for_slot(act, slot)
            return list(bag.fcurves) if bag is not None else []
        except (ImportError, AttributeError):
            pass
        out = []
        for layer in act.layers:
            for strip in layer.strips:
                bag = strip.channelbag(slot)
                if bag is not None:
                    out += list(bag.fcurves)
        return out
    if hasattr(act, "fcurves"):
        return list(act.fcurves)
    return []


def _known(op, kw):
    """`kw` without the options the glTF operator `op` of this Blender does
    not have (each version adds, renames and drops some); the dropped
    names."""
    have = set(op.get_rna_type().properties.keys())
    return {k: v for k, v in kw.items() if k in have}, sorted(set(kw) - have)


# Importer options pinned to what Blender 3.4..4.2 do (module docs): the
# add-on's own collections, one material slot per glTF primitive, the
# glTF scene's extras as the scene's custom properties.
IMPORT_OPTIONS = {"import_scene_as_collection": False, "import_merge_material_slots": False,
                  "import_scene_extras": True}


def gltf_import(filepath):
    """Blender's glTF importer on `filepath` with IMPORT_OPTIONS (those
    this version has); what the operator returns. Raises what it raises
    (RuntimeError)."""
    op = bpy.ops.import_scene.gltf
    kw, _ = _known(op, dict(IMPORT_OPTIONS, filepath=filepath))
    return op(**kw)


def gltf_export(kw):
    """Blender's glTF exporter with the options of `kw` this version has
    (module docs); what the operator returns."""
    op = bpy.ops.export_scene.gltf
    known, _ = _known(op, kw)
    return op(**known)


def override(context, **kw):
    """A context override for an operator call (`Context.temp_override`,
    Blender 3.2 and later)."""
    return context.temp_override(**kw)


def render_engine_workbench():
    """The Workbench engine's id (the same name in every supported
    version)."""
    return "BLENDER_WORKBENCH"


def asset_library(context, name, directory):
    """The user asset library `name` at `directory` in the preferences:
    `asset_libraries.new(name=, directory=)` (Blender 4.1+), else the
    operator `preferences.asset_library_add` (3.4..4.0) renamed. An
    existing one of that name gets the folder."""
    libs = context.preferences.filepaths.asset_libraries
    for lib in libs:
        if lib.name == name:
            lib.path = directory
            return lib
    new = getattr(libs, "new", None)
    if new is not None:
        return new(name=name, directory=directory)
    bpy.ops.preferences.asset_library_add(directory=directory)
    lib = libs[len(libs) - 1]
    lib.name = name
    lib.path = directory
    return lib
def sculpt_lock_xy(scene):
    """Locks X and Y in Sculpt mode (`Sculpt.lock_x` / `lock_y`, Blender
    2.8+; the sculpt settings exist once Sculpt mode was entered: the
    caller enters it once first): a new map's brushes then change heights
    only, and its vertices stay on the grid nodes. Returns whether locked."""
    ts = scene.tool_settings
    sculpt = getattr(ts, "sculpt", None)
    if sculpt is None:
        return False
    done = False
    for k in ("lock_x", "lock_y"):
        if hasattr(sculpt, k):
            setattr(sculpt, k, True)
            done = True
    return done
