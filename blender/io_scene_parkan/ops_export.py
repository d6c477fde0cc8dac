"""File > Export > Parkan model (.msh): the export operator, thin over `exp`
(the model's glTF export, the gltf2msh command and the report of what was
written)."""

import os

import bpy
from bpy.props import BoolProperty, EnumProperty, FloatProperty, StringProperty
from bpy_extras.io_utils import ExportHelper

from . import exp
from . import tools
from .exp import model_collection


class EXPORT_SCENE_OT_parkan_msh(tools.RunsTools, bpy.types.Operator, ExportHelper):
    """Write the scene (or the imported model) as a Parkan: Iron Strategy model"""
    bl_idname = "export_scene.parkan_msh"
    bl_label = "Export Parkan model"
    bl_options = {"REGISTER", "PRESET"}

    filename_ext = ".msh"
    filter_glob: StringProperty(default="*.msh;*.rlb;*.MSH;*.RLB", options={"HIDDEN"})

    mode: EnumProperty(
        name="Mode",
        items=[("BASE", "Edit of the imported model",
                "Write against the model it was imported from: unedited values keep their bytes"),
               ("NEW", "New model", "Author a new model and its WEAR table from the scene")],
        default="BASE")
    base: StringProperty(
        name="Base model", default="",
        description="The original model (FILE.msh or ARCHIVE:ENTRY); empty: the one the model's "
                    "collection remembers from the import")
    target: EnumProperty(
        name="Write",
        items=[("MSH", "Model file (.msh)", "A bare model file"),
               ("ARCHIVE", "Archive copy (.rlb)",
                "A copy of the base archive with this entry replaced (base ARCHIVE:ENTRY only)")],
        default="MSH")
    fps: FloatProperty(name="FPS", description="0: the fps remembered from the import, else 24",
                       min=0.0, max=1000.0, default=0.0)
    keep_keys: BoolProperty(name="Keep every key", default=False,
                            description="Keep every integer-frame key (reduce only resampled channels)")
    selection_only: BoolProperty(name="Selected only", default=False,
                                 description="New model: only the selected objects")
    into: StringProperty(name="Into archive", subtype="FILE_PATH", default="",
                         description="New model: add NAME.msh and NAME.wea to a copy of this archive "
                                     "(written at the chosen .rlb path)")
    entry_name: StringProperty(name="Entry name", default="",
                               description="New model: the entry stem (default: the file name)")
    game_dir: StringProperty(name="Game folder", subtype="DIR_PATH", default="",
                             description="The game folder whose libraries get the textures and "
                                         "materials (empty: the preference; for an edit, the "
                                         "folder the model's libraries came from). Copies of the "
                                         "changed libraries are written beside the output")
    libraries_in_place: BoolProperty(
        name="Change the game's libraries", default=False,
        description="Write material and texture edits into the game folder's Material.lib and "
                    "Textures.lib themselves (gltf2msh --in-place) instead of copies beside the output")
    install: BoolProperty(
        name="Install into the game", default=False,
        description="Write the edit into the game's own archive, map (its Land.msh and Land.map) "
                    "and libraries in place, locked from read to commit (gltf2msh --in-place); the game's original "
                    "of each file replaced is kept once (File > Export > Parkan: restore the game "
                    "puts it back); the chosen file is not used")
    replace_file: BoolProperty(
        name="Replace existing file", default=False,
        description="Replace the chosen file if it exists (gltf2msh --force); off: an existing "
                    "file is kept and the export fails with a message")
    replace_entries: BoolProperty(
        name="Replace library entries", default=False,
        description="New model: replace existing archive and library entries named like the "
                    "new ones (gltf2msh --replace-entries); off: a name collision is refused "
                    "and the names are listed")

    def want_ext(self):
        if self.mode == "BASE" and self.target == "ARCHIVE":
            return ".rlb"
        if self.mode == "NEW" and self.into:
            return ".rlb"
        return ".msh"

    def check(self, context):
        new = bpy.path.ensure_ext(os.path.splitext(self.filepath)[0] if self.filepath else "",
                                  self.want_ext())
        if self.filepath and new != self.filepath:
            self.filepath = new
            return True
        return False

    def invoke(self, context, event):
        coll = model_collection(context)
        if coll is not None and not self.filepath:
            src = coll["msh"]["source"]
            arch, _, entry = src.rpartition(":") if not os.path.exists(src) else ("", "", src)
            stem = os.path.splitext(os.path.basename(entry or src))[0]
            folder = os.path.dirname(arch or src)
            self.filepath = os.path.join(folder, stem + "_edit.msh")
        elif coll is None and "msh" not in context.scene.keys():
            self.mode = "NEW"
        return ExportHelper.invoke(self, context, event)

    def draw(self, context):
        layout = self.layout
        layout.prop(self, "mode")
        if self.mode == "BASE":
            coll = model_collection(context)
            if coll is not None:
                layout.label(text=f"Model: {coll.name}", icon="OUTLINER_COLLECTION")
                layout.label(text=str(coll["msh"]["source"])[-60:])
            layout.prop(self, "base")
            layout.prop(self, "target")
            layout.prop(self, "game_dir")
            layout.prop(self, "libraries_in_place")
            layout.prop(self, "install")
        else:
            layout.prop(self, "selection_only")
            layout.prop(self, "into")
            layout.prop(self, "entry_name")
            layout.prop(self, "game_dir")
            layout.prop(self, "replace_entries")
        layout.prop(self, "replace_file")
        layout.prop(self, "fps")
        layout.prop(self, "keep_keys")

    def run(self, context):
        return exp.run(self, context)


def menu_export(self, context):
    self.layout.operator(EXPORT_SCENE_OT_parkan_msh.bl_idname, text="Parkan model (.msh)")
