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

import json
import os
import shutil
import tempfile

import bpy
from bpy.props import BoolProperty, EnumProperty, FloatProperty, IntProperty, StringProperty
from bpy_extras.io_utils import ExportHelper, ImportHelper

from . import clips
from . import edits
from . import missions
from . import layout as model_layout
from . import scene as sc
from . import terrain
from . import tools
from . import units
from .job import ImportJob, Progress

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


def count_models(m2g, folder):
    """Models under a game folder, for the progress bar (archives listed, bare .msh counted)."""
    n = 0
    for d, _dirs, files in os.walk(folder):
        for f in files:
            low = f.lower()
            if low.endswith(".msh"):
                n += 1
            elif low.endswith(".rlb"):
                try:
                    n += len(tools.list_models(m2g, os.path.join(d, f))["models"])
                except tools.ToolError:
                    pass
    return n


# ---------------------------------------------------------------- import

_entry_cache = {}  # path -> (mtime, listing or error text, enum items)


def browser_path(op, context):
    """The file the file browser has selected (or the operator's filepath)."""
    space = getattr(context, "space_data", None) if context else None
    params = getattr(space, "params", None) if space is not None and space.type == "FILE_BROWSER" else None
    if params is not None:
        d, f = params.directory, params.filename
        if isinstance(d, bytes):
            d = d.decode("utf-8", "surrogateescape")
        if f:
            return os.path.join(d, f)
    return bpy.path.abspath(op.filepath) if op.filepath else ""


def listing(context, path):
    """(listing dict or None, error text, enum items) for a model/archive path, cached by mtime."""
    try:
        mtime = os.stat(path).st_mtime
    except OSError:
        return None, "", [("NONE", "(pick a .msh or .rlb file)", "")]
    hit = _entry_cache.get(path)
    if hit and hit[0] == mtime:
        return hit[1], hit[2], hit[3]
    lst, err = None, ""
    try:
        lst = tools.list_models(binary(context, "msh2gltf"), path)
    except tools.ToolError as e:
        err = str(e)
    if lst is None:
        items = [("NONE", "(no models)", err)]
    elif lst["kind"] in ("model", "terrain"):
        items = [("FILE", lst["models"][0]["name"], "The model file (or map)")]
    else:
        items = [(f"E{m['index']}", m["name"], f"{m['bytes']} bytes") for m in lst["models"]]
        items.append(("ALL", f"All {len(lst['models'])} models", "Every model of the archive"))
    _entry_cache[path] = (mtime, lst, err, items)
    return lst, err, items


def entry_items(self, context):
    return listing(context, browser_path(self, context))[2]


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
                    "archive, instead of all at the origin (maps stay in place; only the view "
                    "moves: exports write each model where the game has it). A single model is "
                    "never moved",
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

    def converter_args(self, context, m2g):
        args = ["--fps", repr(float(self.fps)), "--force"]
        if tools.supports(m2g, "--state"):
            args += ["--state", str(self.state), "--lod", str(self.lod)]
        else:  # older msh2gltf: --lod is the state, --group the level
            args += ["--lod", str(self.state), "--group", str(self.lod)]
        if self.all_cells:
            args.append("--all-cells")
        if not self.textures:
            args.append("--no-textures")
        if self.tolerant:
            args.append("--tolerant")
        gd = game_dir(context, self.game_dir)
        if gd:
            args += ["--game-dir", gd]
        return args

    def execute(self, context):
        try:
            job = self.make_job(context)
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

    def make_job(self, context):
        """The ImportJob for the chosen file, entry, archive or folder."""
        m2g = binary(context, "msh2gltf")
        path = bpy.path.abspath(self.filepath)
        if self.whole_folder or os.path.isdir(path):
            src = path if os.path.isdir(path) else os.path.dirname(path)
            what, total = "folder", count_models(m2g, src)
        else:
            src, what, total = self.pick(m2g, path)
        settings = {"fps": float(self.fps), "set_scene_fps": self.set_scene_fps,
                    "lightmaps": self.lightmaps, "textures": self.textures, "state": self.state,
                    "lod": self.lod, "all_cells": self.all_cells, "layout": self.grid}
        return ImportJob(context, m2g, src, what, total, self.converter_args(context, m2g), settings)

    def pick(self, m2g, path):
        """(source, what, total) for a file: the model, the entry picked, or the archive."""
        if not os.path.isfile(path):
            raise tools.ToolError(f"{path}: no such file")
        lst = tools.list_models(m2g, path)
        names = [m["name"] for m in lst["models"]]
        if lst["kind"] in ("model", "terrain"):
            return path, "model", 1
        pick = self.entry_name.strip()
        if not pick:
            ident = self.entry
            if ident == "ALL":
                pick = "*"
            elif ident.startswith("E"):
                pick = next((m["name"] for m in lst["models"] if f"E{m['index']}" == ident), "")
            if not pick:
                pick = names[0] if names else ""
        if pick == "*":
            return path, "archive", len(names)
        hit = [n for n in names if n.lower() == pick.lower()]
        if not hit:
            raise tools.ToolError(
                f"{os.path.basename(path)} has no model {pick!r} (models: {', '.join(names[:20])})")
        return f"{path}:{hit[0]}", "model", 1


# ---------------------------------------------------------------- export

def model_collection(context):
    """The imported model the user is working on: the active collection, or a
    collection of the active object, that holds the "msh" import record."""
    c = context.view_layer.active_layer_collection.collection
    if "msh" in c.keys() and "source" in c["msh"]:
        return c
    o = context.active_object
    if o is not None:
        for c in o.users_collection:
            if "msh" in c.keys() and "source" in c["msh"]:
                return c
        # A unit's part collection: the unit's collection holds the record.
        for c in bpy.data.collections:
            if "msh" in c.keys() and "source" in c["msh"] and o.name in c.all_objects:
                return c
    models = [c for c in bpy.data.collections if "msh" in c.keys() and "source" in c["msh"]
              and any(o.name in context.scene.objects for o in c.all_objects)]
    return models[0] if len(models) == 1 else None


def export_gltf(context, glb, coll=None, selection=False, sample=False, loose_edges=False):
    """Blender's glTF exporter with extras on, no frame-range clipping, and
    only the active actions (the timeline; clips.append_clips adds the clip
    actions on their NLA tracks afterwards, with their extras).

    `sample=False` (edits of an imported model, the lossless path): the
    authored keys are kept as written, so unedited keys come back with their
    bytes. `sample=True` (new models): every frame is sampled, so the glTF
    holds the pose Blender shows at each frame (Euler and Bezier curves,
    keyed spans over 180 degrees) rather than CUBICSPLINE quaternions whose
    sign flips between keys; gltf2msh drops the samples that lie on the
    game's interpolation.

    `loose_edges=True` (missions): meshes' loose edges are exported too
    (Blender 3.x `use_mesh_edges`, 4.2+ `export_loose_edges`): a route is a
    loop of loose edges, and gltf2msh writes its points back."""
    kw = dict(filepath=glb, export_format="GLB", export_extras=True, export_force_sampling=sample,
              export_frame_step=1,
              export_frame_range=False, export_apply=False, export_animations=True,
              use_selection=selection, use_active_collection=coll is not None,
              use_active_collection_with_nested=True, will_save_settings=False,
              # Only the active (timeline) actions: clip actions sit on NLA tracks
              # and would come back as extra animations without their extras.
              export_nla_strips=False, export_animation_mode="ACTIVE_ACTIONS")
    if loose_edges:
        kw.update(use_mesh_edges=True, export_loose_edges=True)
    have = set(bpy.ops.export_scene.gltf.get_rna_type().properties.keys())
    kw = {k: v for k, v in kw.items() if k in have}
    return bpy.ops.export_scene.gltf(**kw)


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
        description="Write the edit into the game's own archive (and its libraries) in place, "
                    "locked from read to commit (gltf2msh --in-place); the chosen file is not used")
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
        g2m = binary(context, "gltf2msh")
        out = bpy.path.ensure_ext(bpy.path.abspath(self.filepath), self.want_ext())
        tmp = tempfile.mkdtemp(prefix="parkan_export_")
        progress = Progress(context, 3, "export")
        # Folder imports' grid offsets out while exporting: the game's places.
        parked = model_layout.park(bpy.data.collections)
        try:
            if self.mode == "BASE":
                cmd, msg = self.prepare_base(context, g2m, out, tmp)
            else:
                cmd, msg = self.prepare_new(context, g2m, out, tmp)
            progress.step(text="running gltf2msh")
            rep = os.path.join(tmp, "report.json")
            cmd += ["--report", rep]
            # Consent is the user's: never --force or --replace-entries unasked.
            if self.replace_file:
                cmd.append("--force")
            if self.mode == "NEW" and self.replace_entries:
                cmd.append("--replace-entries")
            if self.keep_keys:
                cmd.append("--keep-keys")
            code, err = tools.run(cmd, lambda l: print("parkan:", l))
            progress.step()
            if code != 0:
                raise tools.ToolError(tools.consent_hint(
                    tools.last_error(err) or f"gltf2msh exited with {code}"))
            r = json.load(open(rep, encoding="utf-8")) if os.path.isfile(rep) else {}
            imp = r.get("import") or {}
            if self.mode == "BASE" and isinstance(imp.get("parts"), list):
                what = unit_text(imp)
                warnings = tools.report_warnings(r)
                self.report({"INFO"}, f"{msg}: {what}; {len(warnings)} warning(s)")
                self.report_warnings(context, warnings)
                return {"FINISHED"}
            if self.mode == "BASE":
                libs = imp.get("libraries") or {}
                edited = libs.get("materials") or libs.get("textures") or libs.get("new_textures")
                if imp.get("unchanged") and not edited:
                    what = "unchanged"
                else:
                    what = (f"{imp.get('moved_vertices', 0)} moved / {imp.get('new_vertices', 0)} new "
                            f"vertices, tracks changed {imp.get('changed_tracks', [])}")
                what += library_text(libs)
                for w in libs.get("warnings", []):
                    self.report({"WARNING"}, w)
            else:
                a = r.get("author") or {}
                what = f"{a.get('nodes', '?')} nodes, {a.get('vertices', '?')} vertices, " \
                       f"{a.get('triangles', '?')} triangles"
            warnings = tools.report_warnings(r)
            self.report({"INFO"}, f"Wrote {out} ({msg}; {what}; {len(warnings)} warning(s))")
            self.report_warnings(context, warnings)
            return {"FINISHED"}
        finally:
            model_layout.unpark(parked)
            progress.end()
            shutil.rmtree(tmp, ignore_errors=True)

    def fps_for(self, ex):
        if self.fps > 0:
            return float(self.fps)
        try:
            return float(ex.get("fps", 24.0))
        except (TypeError, ValueError):
            return 24.0

    def prepare_base(self, context, g2m, out, tmp):
        scene = context.scene
        coll = model_collection(context)
        models = [c for c in bpy.data.collections if "msh" in c.keys() and "source" in c["msh"]]
        if coll is None and not self.base and missions.mission_collection(context) is not None:
            raise tools.ToolError("this is a mission: export it with File > Export > Parkan "
                                  "mission (data.tma)")
        if coll is not None:
            ex = dict(sc.idprop_dict(coll["msh"]))
        elif models and not self.base:
            raise tools.ToolError(
                f"{len(models)} imported models in this file: make an object of the one to export "
                "active (or its collection), or set Base model")
        elif "msh" in scene.keys():  # a glTF from msh2gltf imported with Blender's own importer
            ex = dict(sc.idprop_dict(scene["msh"]))
        else:
            ex = {}
        if ex.get("unit") and not self.base:
            return self.prepare_unit(context, g2m, out, tmp, coll, ex)
        base = bpy.path.abspath(self.base) if self.base else ex.get("source", "")
        if not base:
            raise tools.ToolError("no base model: import a Parkan model first, set Base model, "
                                  "or use Mode: New model")
        arch = base if os.path.exists(base) else base.rpartition(":")[0]
        if not os.path.exists(arch):
            raise tools.ToolError(f"base model {base} not found (set Base model)")
        if self.target == "ARCHIVE" and os.path.exists(base):
            raise tools.ToolError(f"base {base} is a bare model: an archive copy needs an ARCHIVE:ENTRY base")
        # Animated objects changed without a key: their transform as the user
        # left it, put back into the glTF after Blender's export replays them.
        objs = list(coll.all_objects) if coll is not None else list(scene.objects)
        unkeyed = edits.unkeyed_changes(objs, scene.frame_current)
        kept = edits.current_transforms(objs, unkeyed)
        glb = os.path.join(tmp, "edit.glb")
        self.export(context, glb, coll, ex, selection=False)
        if kept and edits.patch_glb(glb, kept):
            raise tools.ToolError(edits.refusal(unkeyed, scene.frame_current))
        if self.install and os.path.exists(base):
            raise tools.ToolError(f"Install into the game needs a model from an archive "
                                  f"(ARCHIVE:ENTRY base); {base} is a bare model")
        # Installing: the base archive itself, in place.
        target = arch if self.install else out
        cmd = [g2m, glb, "--base", base, "-o", target, "--fps", repr(self.fps_for(ex))]
        if self.install:
            cmd.append("--in-place")
        imported = (coll.get("parkan_import") or {}).get("game_dir", "") if coll is not None else ""
        gd = bpy.path.abspath(self.game_dir) if self.game_dir else (imported or game_dir(context, ""))
        # A map's materials are Land1.wea rows, never library entries: gltf2msh
        # refuses --game-dir with a map base, so a map edit goes without it.
        is_map = bool(ex.get("terrain"))
        if gd and os.path.isdir(gd) and not is_map and tools.supports(g2m, "--game-dir"):
            # Material and texture edits go into the game's libraries (copies
            # beside the output unless the user asks for the game's own).
            cmd += ["--game-dir", gd]
            if self.libraries_in_place and not self.install:
                cmd.append("--in-place")
        return cmd, f"base {base}"

    def prepare_unit(self, context, g2m, out, tmp, coll, ex):
        """An imported unit (File > Import > Parkan unit): gltf2msh --base
        the unit file writes each edited part into its archive entry, in
        copies of the changed archives in the chosen file's folder, or the
        game's own archives with Install into the game."""
        dat = ex.get("source", "")
        if not os.path.isfile(dat):
            raise tools.ToolError(f"unit file {dat} not found (the unit's collection remembers it)")
        objs = list(coll.all_objects)
        unkeyed = edits.unkeyed_changes(objs, context.scene.frame_current)
        kept = edits.current_transforms(objs, unkeyed)
        glb = os.path.join(tmp, "unit.glb")
        self.export(context, glb, coll, ex, selection=False)
        if kept and edits.patch_glb(glb, kept):
            raise tools.ToolError(edits.refusal(unkeyed, context.scene.frame_current))
        cmd = [g2m, glb, "--base", dat, "--fps", repr(self.fps_for(ex))]
        if self.install:
            cmd.append("--in-place")
        else:
            cmd += ["-o", os.path.dirname(out) or "."]
        return cmd, f"unit {os.path.basename(dat)}"

    def prepare_new(self, context, g2m, out, tmp):
        name = self.entry_name.strip() or os.path.splitext(os.path.basename(out))[0]
        glb = os.path.join(tmp, "new.glb")
        ex = sc.idprop_dict(context.scene.get("msh", {})) or {}
        self.export(context, glb, None, None, selection=self.selection_only)
        cmd = [g2m, glb, "-o", out]
        if self.fps > 0:
            cmd += ["--fps", repr(float(self.fps))]
        elif ex:
            cmd += ["--fps", repr(self.fps_for(dict(ex)))]
        if self.into:
            cmd += ["--into", bpy.path.abspath(self.into), "--name", name]
        gd = game_dir(context, self.game_dir)
        if gd:
            if tools.supports(g2m, "--game-dir"):
                cmd += ["--game-dir", gd]
            else:
                self.report({"WARNING"}, "this gltf2msh has no --game-dir: textures are not added "
                                         "to the game's libraries")
        return cmd, f"new model {name}"

    def export(self, context, glb, coll, ex, selection):
        """Exports to `glb`: the model's collection (its extras as the scene
        extras) with the lightmap Mix nodes bypassed, then restores all."""
        scene = context.scene
        view_layer = context.view_layer
        old_active = view_layer.active_layer_collection
        had = "msh" in scene.keys()
        old_scene_ex = sc.idprop_dict(scene["msh"]) if had else None
        objs = list(coll.all_objects) if coll is not None else list(scene.objects)
        mats = {s.material for o in objs for s in getattr(o, "material_slots", []) if s.material}
        undo = sc.bypass_lightmaps(mats)
        undo_ground = terrain.bypass(mats)
        try:
            if coll is not None:
                # frame_current: the frame whose pose an animated object's
                # static transform is (gltf2msh tells an unkeyed move by it).
                scene["msh"] = dict(ex, frame_current=scene.frame_current)
                sc.set_active_collection(context, coll)
            # A clip action made active: the timeline goes out as the
            # timeline, the clip as its own animation (clips.py).
            with clips.timeline_active(objs, bpy.data.actions):
                res = export_gltf(context, glb, coll, selection, sample=self.mode == "NEW")
            if "FINISHED" not in res or not os.path.isfile(glb):
                raise tools.ToolError(f"Blender's glTF export failed ({res})")
            if self.mode == "BASE":
                clips.append_clips(glb, objs, scene.render.fps / scene.render.fps_base)
        finally:
            terrain.restore(undo_ground)
            sc.restore_lightmaps(undo)
            view_layer.active_layer_collection = old_active
            if coll is not None:
                if had:
                    scene["msh"] = old_scene_ex
                else:
                    del scene["msh"]


def unit_text(imp):
    """What a unit edit wrote (gltf2msh's report `import` of a unit base):
    each part written with its ARCHIVE:ENTRY, the archives, the parts
    unchanged."""
    parts = imp.get("parts") or []
    done = [f"part {p.get('part')} {p.get('record')} -> {p.get('archive')}:{p.get('entry')}"
            for p in parts if p.get("written")]
    same = [str(p.get("record")) for p in parts if not p.get("written") and p.get("unchanged")]
    kept = [str(p.get("record")) for p in parts if not p.get("written") and not p.get("unchanged")]
    if not done:
        # "unchanged" only when nothing differs (gltf2msh says so).
        if imp.get("unchanged"):
            return f"unchanged ({len(parts)} part(s)), nothing written"
        return f"nothing written ({len(parts)} part(s)): see the warnings"
    text = "parts written: " + ", ".join(done) + "; wrote " + ", ".join(imp.get("written") or [])
    if same:
        text += f"; unchanged: {', '.join(same)}"
    if kept:
        text += f"; not written: {', '.join(kept)}"
    return text


def library_text(libs):
    """What a base edit wrote into the game's libraries (gltf2msh's report
    `import.libraries`), for the Info report; empty when nothing."""
    parts = []
    if libs.get("materials"):
        parts.append("materials " + ", ".join(sorted(libs["materials"])))
    if libs.get("textures"):
        parts.append("textures " + ", ".join(sorted(libs["textures"])))
    if libs.get("new_textures"):
        parts.append("new textures " + ", ".join(libs["new_textures"]))
    if libs.get("written"):
        parts.append("wrote " + ", ".join(libs["written"]))
    if libs.get("shared"):
        parts.append("shared with " + "; ".join(f"{k}: {len(v)} model(s)" for k, v in libs["shared"].items()))
    return ("; " + "; ".join(parts)) if parts else ""


def menu_import(self, context):
    self.layout.operator(IMPORT_SCENE_OT_parkan_msh.bl_idname, text="Parkan model (.msh, .rlb)")


def menu_export(self, context):
    self.layout.operator(EXPORT_SCENE_OT_parkan_msh.bl_idname, text="Parkan model (.msh)")


classes = (ParkanPreferences, IMPORT_SCENE_OT_parkan_msh, EXPORT_SCENE_OT_parkan_msh,
           units.IMPORT_SCENE_OT_parkan_unit, missions.IMPORT_SCENE_OT_parkan_mission,
           missions.EXPORT_SCENE_OT_parkan_mission)


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


def register():
    numpy_shim()
    for c in classes:
        bpy.utils.register_class(c)
    bpy.types.TOPBAR_MT_file_import.append(menu_import)
    bpy.types.TOPBAR_MT_file_import.append(units.menu_import)
    bpy.types.TOPBAR_MT_file_import.append(missions.menu_import)
    bpy.types.TOPBAR_MT_file_export.append(menu_export)
    bpy.types.TOPBAR_MT_file_export.append(missions.menu_export)


def unregister():
    bpy.types.TOPBAR_MT_file_export.remove(missions.menu_export)
    bpy.types.TOPBAR_MT_file_export.remove(menu_export)
    bpy.types.TOPBAR_MT_file_import.remove(missions.menu_import)
    bpy.types.TOPBAR_MT_file_import.remove(units.menu_import)
    bpy.types.TOPBAR_MT_file_import.remove(menu_import)
    for c in reversed(classes):
        bpy.utils.unregister_class(c)
