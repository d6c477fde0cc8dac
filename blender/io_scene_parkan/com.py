"""What the import and export operators share: the add-on's preferences
(converters folder, game folder) and the converters and game folder they
name."""

import bpy
from bpy.props import StringProperty

from . import tools

ADDON_ID = __package__ or __name__


def prefs(context):
    a = context.preferences.addons.get(ADDON_ID)
    return a.preferences if a is not None else None


class ParkanPreferences(bpy.types.AddonPreferences):
    bl_idname = ADDON_ID

    bin_dir: StringProperty(
        name="Converters folder",
        description="Folder holding msh2gltf and gltf2msh (empty: bin/ beside the add-on, then PATH)",
        subtype="DIR_PATH", default="")
    game_dir: StringProperty(
        name="Game folder",
        description="Folder with Material.lib, Textures.lib and LightMap.lib (empty: found "
                    "beside the archive, then up the tree)",
        subtype="DIR_PATH", default="")

    def draw(self, context):
        col = self.layout.column()
        col.prop(self, "bin_dir")
        col.prop(self, "game_dir")
        for name in ("msh2gltf", "gltf2msh"):
            try:
                col.label(text=f"{name}: {tools.find_binary(name, self.bin_dir)}", icon="CHECKMARK")
            except tools.ToolError as e:
                col.label(text=str(e), icon="ERROR")


def binary(context, name):
    p = prefs(context)
    return tools.find_binary(name, p.bin_dir if p else "")


def game_dir(context, own):
    if own:
        return bpy.path.abspath(own)
    p = prefs(context)
    return bpy.path.abspath(p.game_dir) if p and p.game_dir else ""
