"""File > Import > Parkan unit (.dat): an assembled unit (chassis, turret,
guns), as `msh2gltf UNITS/<class>/x.dat` builds it (unit-files-notes
§3.5), with each part in its own collection, each animation clip as its
own action on a muted NLA track named after the clip (the whole-timeline
action active), and control points as arrow empties (length = the
point's magnitude).
"""

import os
import shutil
import tempfile

import bpy
from bpy.props import BoolProperty, FloatProperty, StringProperty
from bpy_extras.io_utils import ImportHelper

from . import clips as clip_actions
from . import compat
from . import scene as sc
from . import tools
from . import job


msh_props = sc.msh_props


def style_control_points(objects):
    """Arrow empties sized by the point's magnitude; returns how many."""
    n = 0
    for o in objects:
        cp = msh_props(o).get("control_point")
        if o.type == "EMPTY" and cp is not None:
            o.empty_display_type = "SINGLE_ARROW"
            o.empty_display_size = max(float(cp.get("magnitude", 1.0)), 0.05)
            n += 1
    return n


def part_collections(objects, parent, parts):
    """One child collection per part (`<index> <record>`)."""
    colls = {}
    for o in objects:
        k = msh_props(o).get("part")
        if k is None:
            continue
        k = int(k)
        if k not in colls:
            rec = parts[k]["record"] if k < len(parts) else "part"
            colls[k] = sc.new_collection(f"{k} {rec}", parent)
        sc.move_to_collection([o], colls[k])
    return len(colls)


class IMPORT_SCENE_OT_parkan_unit(tools.RunsTools, bpy.types.Operator, ImportHelper):
    """Import a Parkan: Iron Strategy unit file (UNITS/<class>/<name>.dat) as one assembled unit"""
    bl_idname = "import_scene.parkan_unit"
    bl_label = "Import Parkan unit"
    bl_options = {"REGISTER", "UNDO"}

    filename_ext = ".dat"
    filter_glob: StringProperty(default="*.dat;*.DAT", options={"HIDDEN"})
    fps: FloatProperty(name="FPS", description="Game frames per second of the glTF timeline",
                       min=1.0, max=1000.0, default=24.0)
    textures: BoolProperty(name="Textures", description="Load textures", default=True)

    def run(self, context):
        from . import binary
        m2g = binary(context, "msh2gltf")
        path = bpy.path.abspath(self.filepath)
        tmp = tempfile.mkdtemp(prefix="parkan_unit_")
        progress = job.Progress(context, 2, "unit import")
        try:
            glb = os.path.join(tmp, "unit.glb")
            cmd = [m2g, path, glb, "--fps", str(self.fps)] + ([] if self.textures else ["--no-textures"])
            progress.step(0, text=f"msh2gltf {os.path.basename(path)}")
            code, err = tools.run(cmd, progress.line)
            if not os.path.isfile(glb):
                raise tools.ToolError(tools.last_error(err) or f"msh2gltf exited with {code}")
            progress.step(text="Blender's glTF import")
            res = self.load(context, path, glb)
            progress.step(text="done")
            return res
        finally:
            progress.end()
            shutil.rmtree(tmp, ignore_errors=True)

    def load(self, context, path, glb):
        j = tools.gltf_json(glb)
        scene = context.scene
        scene.render.fps = max(1, int(round(self.fps)))
        scene.render.fps_base = scene.render.fps / float(self.fps)
        top = context.view_layer.active_layer_collection.collection
        coll = sc.new_collection(os.path.splitext(os.path.basename(path))[0], top)
        sc.set_active_collection(context, coll)
        before = set(bpy.data.objects)
        compat.gltf_import(glb)
        objs = [o for o in bpy.data.objects if o not in before]
        sc.move_to_collection(objs, coll)
        ex = j.get("scenes", [{}])[j.get("scene", 0)].get("extras", {}).get("msh", {})
        # What the export needs to send edits back (gltf2msh --base the unit file).
        coll["msh"] = {"source": path, "unit": True, "fps": float(self.fps)}
        clips = clip_actions.organize(objs, j)
        clip_actions.collapse_densified(objs, j, 1.0)
        points = style_control_points(objs)
        parts = part_collections(objs, coll, ex.get("unit", {}).get("parts", []))
        end = sc.activate_animations(objs)
        if end > 0:
            scene.frame_start, scene.frame_end = 0, end
        sc.set_active_collection(context, top)
        self.report({"INFO"}, f"Imported unit: {parts} part(s), {len(objs)} objects, "
                              f"{len(clips)} clip(s), {points} control point(s)")
        return {"FINISHED"}


def menu_import(self, context):
    self.layout.operator(IMPORT_SCENE_OT_parkan_unit.bl_idname, text="Parkan unit (.dat)")
