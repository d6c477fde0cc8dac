"""What a modder found (issue 39 item 3), tried through the io_scene_parkan
add-on's operators as a modder would.

    BLENDER_USER_SCRIPTS=TMP/scripts BLENDER_USER_CONFIG=TMP/config \\
    blender -b --factory-startup --python tests/blender/modder_test.py -- \\
        ADDON.zip SECTION ARGS...

SECTION and its ARGS (run by tests/shared_blender_modder.rs, which checks
the files written with the project's own reader):
  unkeyed GAME ARCHIVE ENTRY WORK
      an animated object of ENTRY moved +0.25 along x without a key; export
      an archive copy WORK/<stem>_edit.rlb, then Install into the game (the
      copy checked): the scene keeps the move (now at every frame, in the
      keys), both exports write it, and each Info line names the file
      written (the game's archive after Install, not the copy).
  reports GAME WORK
      a recolour of static.rlb:s_rock_45.msh's LEAF.3 written into library
      copies (its "shared" warning counted); a map (MAPS/m01/Land.msh) with
      faces repainted; a mission (MISSIONS/Single.01) with one building
      moved, one rock scaled and two objects copied. Every Info line counts
      exactly the warnings listed after it.
  progress GAME WORK
      the unit import (the first UNITS/BATTLE/*.dat), the mission import and
      export: each shows progress (job.Progress: begun, stepped, ended).
  clips GAME ARCHIVE ENTRY
      every clip's NLA strip plays clip frame f at scene frame f: soloed,
      the object shows the clip action's pose of frame f at frame f.
Prints one line `MODDER_TEST {json}`: `errors` lists what failed, `reports`
the add-on's report lines of each step (`io_scene_parkan.reports.history`).
"""

import os
import sys

import bpy

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402

argv = harness.args()
ZIP, SECTION, ARGS = os.path.abspath(argv[0]), argv[1], argv[2:]
out = {"errors": [], "section": SECTION, "reports": {}, "results": {}}
check = harness.checker(out)


def step(name, fn):
    """Runs an operator call `fn` as step `name`: its result and the
    add-on's report lines it made (ERROR: the exception's text)."""
    try:
        from io_scene_parkan.reports import history
    except ImportError:  # an add-on without it: no report lines to read
        history = []
    n = len(history)
    try:
        res = list(fn())
    except RuntimeError as e:  # an ERROR report raises in background mode
        res = ["ERROR", str(e)]
    out["results"][name] = res
    out["reports"][name] = [list(x) for x in history[n:]]
    return res


def counted_as_shown(name):
    """The step's Info line counts exactly the WARNING lines after it."""
    import re
    lines = out["reports"].get(name, [])
    info = [t for lv, t in lines if lv == "INFO"]
    if not check(info, f"{name}: no Info line: {lines}"):
        return
    m = re.search(r"(\d+) warning\(s\)", info[-1])
    shown = [t for lv, t in lines if lv == "WARNING"]
    check(m and int(m.group(1)) == len(shown),
          f"{name}: the Info line counts {m.group(1) if m else '?'} warning(s), "
          f"{len(shown)} shown: {lines}")


def collection_of(stem):
    return next((c for c in bpy.data.collections
                 if c.name.split(".")[0] == stem and "msh" in c.keys()), None)


def export_model(name, coll, path, **kw):
    from io_scene_parkan import scene as sc
    sc.set_active_collection(bpy.context, coll)
    return step(name, lambda: bpy.ops.export_scene.parkan_msh(filepath=path, mode="BASE", **kw))


# ---------------------------------------------------------------- unkeyed


def unkeyed(game, archive, entry, work):
    from io_scene_parkan import edits
    scene = bpy.context.scene
    step("import", lambda: bpy.ops.import_scene.parkan_msh(filepath=archive, entry_name=entry,
                                                             fps=24.0, game_dir=game))
    coll = collection_of(os.path.splitext(entry)[0])
    if not check(coll is not None, "no model collection"):
        return
    animated = sorted((o for o in coll.all_objects
                       if o.animation_data and o.animation_data.action and edits.action_fcurves(o)),
                      key=lambda o: o.name)
    if not check(animated, "no animated object"):
        return
    o = animated[0]
    frame = scene.frame_current
    other = frame + 3
    scene.frame_set(other)
    at_other = o.location.x
    scene.frame_set(frame)
    before = o.location.x
    o.location.x += 0.25
    from io_scene_parkan import scene as sc
    out["moved"] = {"object": o.name, "node": sc.msh_props(o).get("node")}
    copy = os.path.join(work, os.path.splitext(entry)[0] + "_edit.rlb")
    out["copy"] = copy
    export_model("copy", coll, copy, target="ARCHIVE")
    # The scene keeps the move: now, after a replay, and at another frame.
    out["after_copy"] = o.location.x - before
    scene.frame_set(frame)
    out["after_replay"] = o.location.x - before
    scene.frame_set(other)
    out["other_frame"] = o.location.x - at_other
    scene.frame_set(frame)
    export_model("install", coll, copy, target="ARCHIVE", install=True)
    out["after_install"] = o.location.x - before


# ---------------------------------------------------------------- reports


def recolour(game, work):
    from io_scene_parkan import scene as sc
    step("import_rock", lambda: bpy.ops.import_scene.parkan_msh(
        filepath=os.path.join(game, "static.rlb"), entry_name="s_rock_45.msh", fps=24.0,
        game_dir=game))
    coll = collection_of("s_rock_45")
    mat = next((m for m in bpy.data.materials if m.name.split("+")[0] == "LEAF.3"), None)
    if not check(coll is not None and mat is not None, "no s_rock_45 or LEAF.3"):
        return
    base_in = sc.find_bsdf(mat.node_tree).inputs["Base Color"]
    factor = base_in
    if base_in.is_linked:
        src = base_in.links[0].from_node
        factor = next(i for i in src.inputs if i.type == "RGBA" and i.enabled and not i.is_linked)
    factor.default_value = (1.0, 0.2, 0.0, 1.0)
    export_model("recolour", coll, os.path.join(work, "rock.rlb"), target="ARCHIVE",
                 game_dir=game)
    counted_as_shown("recolour")
    sc.set_active_collection(bpy.context, bpy.context.scene.collection)


def repaint(game, work):
    land = os.path.join(game, "MAPS", "m01", "Land.msh")
    step("import_map", lambda: bpy.ops.import_scene.parkan_msh(filepath=land, fps=24.0))
    coll = next((c for c in bpy.data.collections if "msh" in c.keys()
                 and c["msh"].get("terrain")), None)
    if not check(coll is not None, "no map collection"):
        return
    meshes = [o for o in sorted(coll.all_objects, key=lambda o: o.name)
              if o.type == "MESH" and len(o.data.materials) > 1]
    if not check(meshes, "no map mesh with two materials"):
        return
    me = meshes[0].data
    n = 0
    for p in me.polygons:
        if n < 4:
            p.material_index = (p.material_index + 1) % len(me.materials)
            n += 1
    me.update()
    out["repainted"] = {"object": meshes[0].name, "faces": n}
    export_model("repaint", coll, os.path.join(work, "Land_edit.msh"), target="MSH")
    counted_as_shown("repaint")


def mission_counts(game, work):
    import mathutils
    from io_scene_parkan import missions, scene as sc
    sc.set_active_collection(bpy.context, bpy.context.scene.collection)
    before = set(bpy.data.collections)
    step("import_mission", lambda: bpy.ops.import_scene.parkan_mission(
        filepath=os.path.join(game, "MISSIONS", "Single.01", "data.tma")))
    coll = next((c for c in bpy.data.collections if c not in before and missions.RECORD in c.keys()),
                None)
    if not check(coll is not None, "no mission collection"):
        return
    placed = sorted((o for o in coll.all_objects if missions.props(o)),
                    key=lambda o: missions.props(o)["index"])

    def first(test, skip=()):
        return next(o for o in placed if test(missions.props(o)) and o not in skip)

    building = first(lambda x: x["kind"] == 0 and x.get("host", -1) == -1)
    building.matrix_world.translation += mathutils.Vector((4.0, 0.0, 0.0))
    rock = first(lambda x: x["kind"] == 3)
    rock.scale = rock.scale * 1.5
    copied = []
    for src in (first(lambda x: x["kind"] == 2), first(lambda x: x["kind"] == 3, (rock,))):
        bpy.ops.object.select_all(action="DESELECT")
        for d in missions.descendants(src):
            d.select_set(True)
        bpy.context.view_layer.objects.active = src
        new_before = set(bpy.data.objects)
        bpy.ops.object.duplicate()
        copy = [o for o in bpy.data.objects if o not in new_before and missions.props(o)]
        if copy:
            copy[0].matrix_world.translation += mathutils.Vector((0.0, 6.0, 0.0))
            copied.append(copy[0].name)
    bpy.context.view_layer.update()
    out["mission_edit"] = {"moved": missions.props(building)["index"],
                           "scaled": missions.props(rock)["index"], "copies": copied}
    sc.set_active_collection(bpy.context, coll)
    step("mission", lambda: bpy.ops.export_scene.parkan_mission(
        filepath=os.path.join(work, "data_edit.tma")))
    counted_as_shown("mission")


def reports_section(game, work):
    recolour(game, work)
    repaint(game, work)
    mission_counts(game, work)


# ---------------------------------------------------------------- progress


def progress(game, work):
    from io_scene_parkan import job, missions, scene as sc
    calls = []
    cls = job.Progress
    init, stepf, end = cls.__init__, cls.step, cls.end

    def rec_init(self, context, total, what):
        calls.append(["begin", what, total])
        init(self, context, total, what)

    def rec_step(self, n=1, text=""):
        calls.append(["step", self.what, n, text])
        stepf(self, n, text)

    def rec_end(self):
        calls.append(["end", self.what])
        end(self)

    cls.__init__, cls.step, cls.end = rec_init, rec_step, rec_end
    battle = os.path.join(game, "UNITS", "BATTLE")
    dat = sorted(f for f in os.listdir(battle) if f.lower().endswith(".dat"))[0]
    seen = {}
    for name, fn in (
            ("unit", lambda: bpy.ops.import_scene.parkan_unit(filepath=os.path.join(battle, dat))),
            ("mission_import", lambda: bpy.ops.import_scene.parkan_mission(
                filepath=os.path.join(game, "MISSIONS", "Single.01", "data.tma"))),
            ("mission_export", lambda: bpy.ops.export_scene.parkan_mission(
                filepath=os.path.join(work, "data_edit.tma")))):
        if name == "mission_export":
            coll = next(c for c in bpy.data.collections if missions.RECORD in c.keys())
            sc.set_active_collection(bpy.context, coll)
        n = len(calls)
        step(name, fn)
        seen[name] = calls[n:]
    out["progress"] = seen


# ---------------------------------------------------------------- clips


def clip_strips(game, archive, entry):
    from io_scene_parkan import clips
    scene = bpy.context.scene
    step("import", lambda: bpy.ops.import_scene.parkan_msh(filepath=archive, entry_name=entry,
                                                             fps=24.0, game_dir=game))
    strips = []
    for o in sorted(bpy.context.scene.objects, key=lambda o: o.name):
        ad = o.animation_data
        if ad is None:
            continue
        for t in ad.nla_tracks:
            for s in t.strips:
                if s.action is not None and s.action.get("parkan_clip") is not None:
                    strips.append((o, t, s))
    out["strips"] = [{"object": o.name, "track": t.name, "frame_start": s.frame_start,
                      "action_frame_start": s.action_frame_start} for o, t, s in strips]
    if not check(strips, "no clip strip"):
        return
    # Solo each clip's track on one object: the object shows the clip
    # action's pose of frame f at scene frame f.
    worst = 0.0
    for o, t, s in strips[:6]:
        fcs = [fc for fc in clips.fcurves_of(s.action, getattr(s, "action_slot", None))
               if fc.data_path == "location"]
        if not fcs:
            continue
        ad = o.animation_data
        timeline = ad.action
        ad.action = None
        t.mute, t.is_solo = False, True
        lo, hi = s.action.frame_range
        for f in range(int(lo), int(hi) + 1):
            scene.frame_set(f)
            for fc in fcs:
                worst = max(worst, abs(o.location[fc.array_index] - fc.evaluate(f)))
        t.is_solo, t.mute = False, True
        ad.action = timeline
    out["solo_worst"] = worst
    check(worst < 1e-4, f"a soloed clip is off the clip action's pose by {worst}: {out['strips'][:6]}")
    zero = [x for x in out["strips"] if abs(x["frame_start"] - clips.CLIP_ZERO
                                            - x["action_frame_start"]) > 1e-6] \
        if hasattr(clips, "CLIP_ZERO") else out["strips"]
    check(not zero, f"strips not at clip time: {zero[:4]}")


def main():
    out["blender"] = bpy.app.version_string
    harness.install_addon(ZIP, out)
    if SECTION == "unkeyed":
        game, archive, entry, work = ARGS
        os.makedirs(work, exist_ok=True)
        unkeyed(game, archive, entry, work)
    elif SECTION == "reports":
        os.makedirs(ARGS[1], exist_ok=True)
        reports_section(*ARGS)
    elif SECTION == "progress":
        os.makedirs(ARGS[1], exist_ok=True)
        progress(*ARGS)
    elif SECTION == "clips":
        clip_strips(*ARGS)
    else:
        out["errors"].append(f"unknown section {SECTION}")


harness.run("MODDER_TEST", main, out)
sys.stdout.flush()
