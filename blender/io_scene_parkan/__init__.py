"""Parkan: Iron Strategy models (MSH in NRes archives) for Blender.

File > Import > Parkan unit (.dat): an assembled unit (see `units`).
File > Import/Export > Parkan mission (data.tma): a whole mission and its
edits back (see `missions`).
File > Import > Parkan model (.msh, .rlb): a bare model, one entry of an
archive (picked from the archive's model list), every model of an archive,
or every archive of a game folder. File > Export > Parkan model (.msh): the
edit of an imported model, written against the model it came from (kept in
the model's collection as the glTF scene extras `msh.source` and friends),
or a new model (optionally added to a copy of an archive).

Both directions run the project's converters (`msh2gltf`, `gltf2msh`) and
Blender's own glTF importer/exporter through a temporary folder. The
converters are looked up in the add-on preferences' folder, in `bin/` beside
this file (the packaged zip ships them there), then on PATH.

Layout (as glTF-Blender-IO's): `ops_import` and `ops_export` hold the
operators, thin over `imp` and `exp` (what an import and an export run);
`com` holds what both share (preferences, converters, game folder); every
difference between Blender versions is in `compat`. This file only
registers. `units` and `missions` hold the unit and mission operators;
`ground` the mission's Object > Drop to ground (Parkan).
"""

bl_info = {
    "name": "Parkan: Iron Strategy models (MSH)",
    "author": "mshgltf",
    "version": (0, 1, 0),
    "blender": (3, 4, 0),
    "location": "File > Import/Export > Parkan model",
    "description": "Import and export Parkan: Iron Strategy MSH models and RLB archives "
                   "through the mshgltf converters",
    "category": "Import-Export",
}

import bpy

from . import clans
from . import assets
from . import compat
from . import ground
from . import install
from . import missions
from . import newmap
from . import newmission
from . import units
from .com import ParkanPreferences
from .ops_export import EXPORT_SCENE_OT_parkan_msh, menu_export
from .ops_import import IMPORT_SCENE_OT_parkan_msh, menu_import

# What other modules and scripts reach through the package: the converters
# (units, missions) and Blender's glTF export of a model (missions, tests).
from .com import ADDON_ID, binary, game_dir, prefs  # noqa: F401
from .exp import export_gltf, model_collection  # noqa: F401

classes = (ParkanPreferences, IMPORT_SCENE_OT_parkan_msh, EXPORT_SCENE_OT_parkan_msh,
           units.IMPORT_SCENE_OT_parkan_unit, missions.IMPORT_SCENE_OT_parkan_mission,
           missions.EXPORT_SCENE_OT_parkan_mission, ground.OBJECT_OT_parkan_drop_to_ground,
           clans.OBJECT_OT_parkan_add_clan, clans.OBJECT_OT_parkan_rename_clan,
           install.PARKAN_OT_restore_game) + assets.classes


def register():
    compat.numpy_shim()
    for c in classes:
        bpy.utils.register_class(c)
    bpy.types.TOPBAR_MT_file_import.append(menu_import)
    bpy.types.TOPBAR_MT_file_import.append(units.menu_import)
    bpy.types.TOPBAR_MT_file_import.append(missions.menu_import)
    bpy.types.TOPBAR_MT_file_export.append(menu_export)
    bpy.types.TOPBAR_MT_file_export.append(missions.menu_export)
    bpy.types.VIEW3D_MT_object.append(ground.menu_object)
    bpy.types.VIEW3D_MT_add.append(clans.menu_add)
    bpy.types.VIEW3D_MT_object.append(clans.menu_rename)
    bpy.types.TOPBAR_MT_file_import.append(assets.menu_import)
    bpy.types.TOPBAR_MT_file_export.append(install.menu_export)
    newmission.register()
    newmap.register()


def unregister():
    newmap.unregister()
    newmission.unregister()
    bpy.types.TOPBAR_MT_file_export.remove(install.menu_export)
    bpy.types.TOPBAR_MT_file_import.remove(assets.menu_import)
    bpy.types.VIEW3D_MT_add.remove(clans.menu_add)
    bpy.types.VIEW3D_MT_object.remove(clans.menu_rename)
    bpy.types.VIEW3D_MT_object.remove(ground.menu_object)
    bpy.types.TOPBAR_MT_file_export.remove(missions.menu_export)
    bpy.types.TOPBAR_MT_file_export.remove(menu_export)
    bpy.types.TOPBAR_MT_file_import.remove(missions.menu_import)
    bpy.types.TOPBAR_MT_file_import.remove(units.menu_import)
    bpy.types.TOPBAR_MT_file_import.remove(menu_import)
    for c in reversed(classes):
        bpy.utils.unregister_class(c)
