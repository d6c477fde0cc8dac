"""File > Import > Parkan model (.msh, .rlb): the import operator, thin over
`imp` (what it lists, the converter's arguments, the ImportJob it runs)."""

import os

import bpy
from bpy.props import BoolProperty, EnumProperty, FloatProperty, IntProperty, StringProperty
from bpy_extras.io_utils import ImportHelper

from . import imp
from . import tools
from .imp import browser_path, entry_items, listing


class IMPORT_SCENE_OT_parkan_msh(bpy.types.Operator, ImportHelper):
    """Import a Parkan: Iron Strategy model, archive entry, archive or game folder"""
    bl_idname = "import_scene.parkan_msh"
    bl_label = "Import Parkan model"
    bl_options = {"REGISTER", "UNDO", "PRESET"}

    filename_ext = ".msh"
    filter_glob: StringProperty(default="*.msh;*.rlb;*.MSH;*.RLB", options={"HIDDEN"})

    entry: EnumProperty(name="Model", description="The archive entry to import", items=entry_items)
    entry_name: StringProperty(
        name="Entry name", default="",
        description="Archive entry by name (overrides the list; '*' = every model of the archive)")
    whole_folder: BoolProperty(
        name="Whole folder",
        description="Import every model of every archive in the selected file's folder (a game folder)",
        default=False)
    grid: BoolProperty(
        name="Lay out on a grid",
        description="A folder or a whole archive: put the models side by side, grouped by "
                    "archive, instead of all at the origin (maps and missions too; only the "
                    "view moves: exports write each model where the game has it). A single "
                    "model is never moved",
        default=True)
    state: IntProperty(name="State", description="Slot cell state (0..2)", min=0, max=2, default=0)
    lod: IntProperty(name="LOD", description="Slot cell level of detail (0..4)", min=0, max=4, default=0)
    all_cells: BoolProperty(
        name="All cells", description="Add every non-empty cell as a child object", default=False)
    fps: FloatProperty(
        name="FPS", description="Game frames per second of the glTF timeline (one game frame = one "
                                "Blender frame when the scene uses the same fps)",
        min=1.0, max=1000.0, default=24.0)
    set_scene_fps: BoolProperty(
        name="Set scene FPS", description="Set the scene's frame rate to FPS (keys land on frames)",
        default=True)
    textures: BoolProperty(name="Textures", description="Load textures and lightmaps", default=True)
    lightmaps: BoolProperty(
        name="Show lightmaps",
        description="Multiply each lightmap (UV map 2) into the base colour in the material nodes",
        default=True)
    tolerant: BoolProperty(
        name="Tolerant", description="Convert what is sound in broken models (repairs become warnings)",
        default=False)
    game_dir: StringProperty(
        name="Game folder", subtype="DIR_PATH", default="",
        description="Folder with Material.lib/Textures.lib/LightMap.lib (empty: the preference, "
                    "else found beside the archive)")

    def draw(self, context):
        layout = self.layout
        path = browser_path(self, context)
        lst, err, _items = listing(context, path) if path and os.path.isfile(path) else (None, "", None)
        box = layout.box()
        box.prop(self, "whole_folder")
        if not self.whole_folder:
            if lst is not None and lst["kind"] == "archive":
                box.prop(self, "entry")
            elif err:
                box.label(text=err[:80], icon="ERROR")
            box.prop(self, "entry_name")
        box.prop(self, "grid")
        col = layout.column(heading="Cells")
        col.prop(self, "state")
        col.prop(self, "lod")
        col.prop(self, "all_cells")
        col = layout.column()
        col.prop(self, "fps")
        col.prop(self, "set_scene_fps")
        col.prop(self, "textures")
        col.prop(self, "lightmaps")
        col.prop(self, "tolerant")
        col.prop(self, "game_dir")

    def execute(self, context):
        try:
            job = imp.make_job(self, context)
        except tools.ToolError as e:
            self.report({"ERROR"}, str(e))
            return {"CANCELLED"}
        # Through the UI, an archive or a folder runs as a modal operator
        # (progress, Esc cancels); scripts and background Blender wait for it.
        modal = (job.what != "model" and self.options.is_invoke and not bpy.app.background
                 and context.window is not None)
        if modal:
            self._job = job
            wm = context.window_manager
            self._timer = wm.event_timer_add(0.02, window=context.window)
            wm.modal_handler_add(self)
            return {"RUNNING_MODAL"}
        try:
            while job.step(context, block=True):
                pass
            return self.finish(context, job)
        except tools.ToolError as e:
            self.report({"ERROR"}, str(e))
            return {"CANCELLED"}
        finally:
            job.cleanup()

    def modal(self, context, event):
        job = self._job
        try:
            if event.type == "ESC":
                job.cancel()
                return self.end_modal(context, self.finish(context, job))
            if event.type == "TIMER":
                if not job.step(context):
                    return self.end_modal(context, self.finish(context, job))
                return {"RUNNING_MODAL"}
        except tools.ToolError as e:
            self.report({"ERROR"}, str(e))
            return self.end_modal(context, {"CANCELLED"})
        # Viewport navigation stays usable; other input waits for the import.
        if event.type in {"MIDDLEMOUSE", "WHEELUPMOUSE", "WHEELDOWNMOUSE", "TRACKPADPAN",
                          "TRACKPADZOOM", "MOUSEMOVE", "INBETWEEN_MOUSEMOVE"}:
            return {"PASS_THROUGH"}
        return {"RUNNING_MODAL"}

    def end_modal(self, context, result):
        context.window_manager.event_timer_remove(self._timer)
        self._job.cleanup()
        self._job = None
        return result

    def finish(self, context, job):
        job.settle(context)
        for level, text in job.reports():
            self.report({level}, text)
        return {"FINISHED"}



def menu_import(self, context):
    self.layout.operator(IMPORT_SCENE_OT_parkan_msh.bl_idname, text="Parkan model (.msh, .rlb)")
