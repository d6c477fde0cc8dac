"""File > Export > Parkan model: what the export operator (ops_export) runs:
the model's collection, Blender's glTF export of it, the gltf2msh command
of an edit (model, unit) or a new model, and the report of what was
written."""

import json
import os
import shutil
import tempfile

import bpy

from . import clips
from . import compat
from . import edits
from . import missions
from . import reports
from . import layout as model_layout
from . import scene as sc
from . import terrain
from . import tools
from .com import binary, game_dir
from .job import Progress


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
    (Blender 3.x `use_mesh_edges`, 4.2+ `export_loose_edges`; compat drops
    the one a Blender lacks): a route is a loop of loose edges, and
    gltf2msh writes its points back."""
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
    return compat.gltf_export(kw)


def run(op, context):
    g2m = binary(context, "gltf2msh")
    out = bpy.path.ensure_ext(bpy.path.abspath(op.filepath), op.want_ext())
    tmp = tempfile.mkdtemp(prefix="parkan_export_")
    progress = Progress(context, 3, "export")
    op._held, op._wrote = edits.Held([], 0), None
    # Folder imports' grid offsets out while exporting: the game's places.
    parked = model_layout.park(bpy.data.collections)
    try:
        if op.mode == "BASE":
            cmd, msg = prepare_base(op, context, g2m, out, tmp)
        else:
            cmd, msg = prepare_new(op, context, g2m, out, tmp)
        progress.step(text="running gltf2msh")
        rep = os.path.join(tmp, "report.json")
        cmd += ["--report", rep]
        # Consent is the user's: never --force or --replace-entries unasked.
        if op.replace_file:
            cmd.append("--force")
        if op.mode == "NEW" and op.replace_entries:
            cmd.append("--replace-entries")
        if op.keep_keys:
            cmd.append("--keep-keys")
        code, err = tools.run(cmd, lambda l: print("parkan:", l))
        progress.step()
        if code != 0:
            raise tools.ToolError(tools.consent_hint(
                tools.last_error(err) or f"gltf2msh exited with {code}"))
        r = json.load(open(rep, encoding="utf-8")) if os.path.isfile(rep) else {}
        if op.mode == "BASE":
            reports.base_export(op, context, r, op._wrote, op._held)
            return {"FINISHED"}
        a = r.get("author") or {}
        what = f"{a.get('nodes', '?')} nodes, {a.get('vertices', '?')} vertices, " \
               f"{a.get('triangles', '?')} triangles"
        warnings = reports.all_warnings(r)
        reports.finish(op, context, f"Wrote {out} ({msg}; {what}; "
                                    f"{reports.warning_count(warnings)})", warnings)
        return {"FINISHED"}
    finally:
        model_layout.unpark(parked)
        op._held.restore()  # what the user left, also after a failure
        progress.end()
        shutil.rmtree(tmp, ignore_errors=True)


def fps_for(op, ex):
    if op.fps > 0:
        return float(op.fps)
    try:
        return float(ex.get("fps", 24.0))
    except (TypeError, ValueError):
        return 24.0


def prepare_base(op, context, g2m, out, tmp):
    scene = context.scene
    coll = model_collection(context)
    models = [c for c in bpy.data.collections if "msh" in c.keys() and "source" in c["msh"]]
    if coll is None and not op.base and missions.mission_collection(context) is not None:
        raise tools.ToolError("this is a mission: export it with File > Export > Parkan "
                              "mission (data.tma)")
    if coll is not None:
        ex = dict(sc.idprop_dict(coll["msh"]))
    elif models and not op.base:
        raise tools.ToolError(
            f"{len(models)} imported models in this file: make an object of the one to export "
            "active (or its collection), or set Base model")
    elif "msh" in scene.keys():  # a glTF from msh2gltf imported with Blender's own importer
        ex = dict(sc.idprop_dict(scene["msh"]))
    else:
        ex = {}
    if ex.get("unit") and not op.base:
        return prepare_unit(op, context, g2m, out, tmp, coll, ex)
    base = bpy.path.abspath(op.base) if op.base else ex.get("source", "")
    if not base:
        raise tools.ToolError("no base model: import a Parkan model first, set Base model, "
                              "or use Mode: New model")
    arch = base if os.path.exists(base) else base.rpartition(":")[0]
    if not os.path.exists(arch):
        raise tools.ToolError(f"base model {base} not found (set Base model)")
    if op.target == "ARCHIVE" and os.path.exists(base):
        raise tools.ToolError(f"base {base} is a bare model: an archive copy needs an ARCHIVE:ENTRY base")
    # Animated objects changed without a key: their transform as the user
    # left it, put back into the glTF after Blender's export replays them.
    objs = list(coll.all_objects) if coll is not None else list(scene.objects)
    op._held = held = edits.Held(objs, scene.frame_current)
    glb = os.path.join(tmp, "edit.glb")
    export(op, context, glb, coll, ex, selection=False)
    if held.kept and edits.patch_glb(glb, held.kept):
        raise tools.ToolError(edits.refusal(held.changes, scene.frame_current))
    # A map's Land.msh is installed over itself (and its Land.map beside it).
    is_map = bool(ex.get("terrain"))
    if op.install and os.path.exists(base) and not is_map:
        raise tools.ToolError(f"Install into the game needs a model from an archive "
                              f"(ARCHIVE:ENTRY base); {base} is a bare model")
    # Installing: the base archive (or the map) itself, in place; the game's
    # originals are kept (install.py).
    target = arch if op.install else out
    entry = base.rpartition(":")[2] if op.install and not is_map else ""
    op._wrote = ("model", target, entry)
    cmd = [g2m, glb, "--base", base, "-o", target, "--fps", repr(fps_for(op, ex))]
    if op.install:
        cmd.append("--in-place")
    imported = (coll.get("parkan_import") or {}).get("game_dir", "") if coll is not None else ""
    gd = bpy.path.abspath(op.game_dir) if op.game_dir else (imported or game_dir(context, ""))
    # A map's materials are Land1.wea rows, never library entries: gltf2msh
    # refuses --game-dir with a map base, so a map edit goes without it.
    if gd and os.path.isdir(gd) and not is_map and tools.supports(g2m, "--game-dir"):
        # Material and texture edits go into the game's libraries (copies
        # beside the output unless the user asks for the game's own).
        cmd += ["--game-dir", gd]
        if op.libraries_in_place and not op.install:
            cmd.append("--in-place")
    return cmd, f"base {base}"


def prepare_unit(op, context, g2m, out, tmp, coll, ex):
    """An imported unit (File > Import > Parkan unit): gltf2msh --base
    the unit file writes each edited part into its archive entry, in
    copies of the changed archives in the chosen file's folder, or the
    game's own archives with Install into the game."""
    dat = ex.get("source", "")
    if not os.path.isfile(dat):
        raise tools.ToolError(f"unit file {dat} not found (the unit's collection remembers it)")
    objs = list(coll.all_objects)
    op._held = held = edits.Held(objs, context.scene.frame_current)
    glb = os.path.join(tmp, "unit.glb")
    export(op, context, glb, coll, ex, selection=False)
    if held.kept and edits.patch_glb(glb, held.kept):
        raise tools.ToolError(edits.refusal(held.changes, context.scene.frame_current))
    op._wrote = ("unit", os.path.basename(dat), "")
    cmd = [g2m, glb, "--base", dat, "--fps", repr(fps_for(op, ex))]
    if op.install:
        cmd.append("--in-place")
    else:
        cmd += ["-o", os.path.dirname(out) or "."]
    return cmd, f"unit {os.path.basename(dat)}"


def prepare_new(op, context, g2m, out, tmp):
    name = op.entry_name.strip() or os.path.splitext(os.path.basename(out))[0]
    glb = os.path.join(tmp, "new.glb")
    ex = sc.idprop_dict(context.scene.get("msh", {})) or {}
    export(op, context, glb, None, None, selection=op.selection_only)
    cmd = [g2m, glb, "-o", out]
    if op.fps > 0:
        cmd += ["--fps", repr(float(op.fps))]
    elif ex:
        cmd += ["--fps", repr(fps_for(op, dict(ex)))]
    if op.into:
        cmd += ["--into", bpy.path.abspath(op.into), "--name", name]
    gd = game_dir(context, op.game_dir)
    if gd:
        if tools.supports(g2m, "--game-dir"):
            cmd += ["--game-dir", gd]
        else:
            op.report({"WARNING"}, "this gltf2msh has no --game-dir: textures are not added "
                                     "to the game's libraries")
    return cmd, f"new model {name}"


def export(op, context, glb, coll, ex, selection):
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
            # The collection's "unit" flag (units.py: True) is the add-on's
            # own record, not extras.msh.unit (an object, the parts table):
            # gltf2msh refuses a value of the wrong type (gltf.json).
            rec = {k: v for k, v in ex.items() if k != "unit" or isinstance(v, dict)}
            scene["msh"] = dict(rec, frame_current=scene.frame_current)
            sc.set_active_collection(context, coll)
        # A clip action made active: the timeline goes out as the
        # timeline, the clip as its own animation (clips.py).
        with clips.timeline_active(objs, bpy.data.actions):
            res = export_gltf(context, glb, coll, selection, sample=op.mode == "NEW")
        if "FINISHED" not in res or not os.path.isfile(glb):
            raise tools.ToolError(f"Blender's glTF export failed ({res})")
        if op.mode == "BASE":
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
