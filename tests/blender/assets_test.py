"""The game's asset library through the io_scene_parkan add-on.

    blender -b --factory-startup --python tests/blender/assets_test.py -- \\
        ADDON.zip WORK_DIR GAME_DIR MISSION_DIR

Run by tests/shared_blender_assets.rs on a copy of the corpus. Installs the
add-on; builds the game's asset library (parkan.build_asset_library) into
WORK_DIR/cache, then runs it again (the cache must be reused: the .blend
untouched); imports MISSION_DIR (File > Import > Parkan mission); appends
three assets of different kinds (the first building, unit and scenery
record of the library's index) into the mission collection as the Asset
Browser's drag does (assets.append_asset), each at a chosen place and turn
(scenery also scaled 1.5), the building and the unit owned by the
mission's clan 1 (custom property parkan_owner: the clan collections are
not on main yet); changes the first rock's model with parkan.change_model
to another scenery record; exports (File > Export > Parkan mission) into a
new mission folder GAME/MISSIONS/Assets.01/data.tma; imports that and
reports where its new objects stand; then sets a placed object's model
path to "s_crate_23" by hand (a custom property edit) and exports again:
the export must be refused naming mission.resolve.
Prints one line `ASSETS_TEST {json}`.
"""

import json
import os
import shutil
import sys

import bpy

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
import mathutils  # noqa: E402

argv = harness.args()
ZIP, WORK, GAME, MISSION = (os.path.abspath(a) for a in argv[:4])
out = {"errors": []}
check = harness.checker(out)
PLACES = {0: (40.0, 30.0, 1.5), 1: (-25.5, 12.25, 3.0), 2: (10.0, -35.75, 0.5)}
TURNS = {0: 0.5, 1: -1.25, 2: 2.0}


def call(fn):
    try:
        return list(fn())
    except RuntimeError as e:
        return ["ERROR", str(e)]


def mission_coll(missions, source_dir):
    for c in bpy.data.collections:
        if missions.RECORD in c.keys() and os.path.dirname(c[missions.RECORD]["source"]) == source_dir:
            return c
    return None


def export(missions, coll, path):
    from io_scene_parkan import scene as sc
    sc.set_active_collection(bpy.context, coll)
    return call(lambda: bpy.ops.export_scene.parkan_mission(filepath=path))


def vec(v):
    return [float(x) for x in v]


def build_library(assets):
    cache = os.path.join(WORK, "cache")
    out["build"] = call(lambda: bpy.ops.parkan.build_asset_library(game_dir=GAME, cache_dir=cache))
    lib = bpy.context.window_manager["parkan_asset_library"]
    blend = os.path.join(lib, assets.BLEND)
    t0 = os.stat(blend).st_mtime_ns
    out["rebuild"] = call(lambda: bpy.ops.parkan.build_asset_library(game_dir=GAME, cache_dir=cache))
    out["cache_reused"] = os.stat(blend).st_mtime_ns == t0
    with open(os.path.join(lib, assets.STAMP), encoding="utf-8") as f:
        out["previews"] = json.load(f)["previews"]
    out["libraries"] = [(l.name, l.path) for l in bpy.context.preferences.filepaths.asset_libraries]
    with bpy.data.libraries.load(blend, assets_only=True) as (src, _dst):
        out["blend_assets"] = sorted(src.objects)
    with open(os.path.join(lib, assets.CATS), encoding="utf-8") as f:
        out["catalog_lines"] = [l for l in f.read().splitlines() if l and not l.startswith("#")]
    return lib, assets.load_index(lib)


def add_assets(assets, missions, lib, index, coll):
    clans = sorted((missions.props(o, "parkan_clan") for o in coll.all_objects
                    if missions.props(o, "parkan_clan")), key=lambda c: c["index"])
    owner = clans[1]["name"]
    out["owner"] = {"name": owner, "index": clans[1]["index"]}
    picks = {}
    for a in index["assets"]:
        k = 2 if a["kind"] in (2, 3) else a["kind"]
        picks.setdefault(k, a)
    added = []
    for k in (0, 1, 2):
        a = picks[k]
        o = assets.append_asset(lib, a["name"], coll)
        o.location = mathutils.Vector(PLACES[k])
        o.rotation_mode = "XYZ"
        o.rotation_euler = (0.0, 0.0, TURNS[k])
        if k == 2:
            o.scale = (1.5, 1.5, 1.5)
        else:
            o["parkan_owner"] = owner
        bpy.context.view_layer.update()
        added.append({"name": a["name"], "kind": a["kind"], "path": a["path"], "object": o.name,
                      "location": vec(o.matrix_world.translation), "turn": TURNS[k],
                      "scale": 1.5 if k == 2 else 1.0,
                      "preview": list(o.preview.image_size) if o.preview else None,
                      "template": assets.object_record(o).get("template")})
    return added


def change_rock(assets, missions, coll, index):
    rock = next(o for o in sorted(coll.all_objects, key=lambda o: o.name)
                if missions.props(o).get("kind") == 3)
    old = missions.props(rock)["path"]
    other = next(a["path"] for a in index["assets"] if a["kind"] in (2, 3) and a["path"] != old)
    bpy.context.view_layer.objects.active = rock
    res = call(lambda: bpy.ops.parkan.change_model(model=other))
    return {"index": missions.props(rock)["index"], "old": old, "new": other, "result": res,
            "now": missions.props(rock)["path"]}


def main():
    if not harness.install_addon(ZIP, out):
        return
    from io_scene_parkan import assets, missions
    lib, index = build_library(assets)
    out["index_assets"] = len(index["assets"])
    out["import"] = call(lambda: bpy.ops.import_scene.parkan_mission(filepath=MISSION))
    coll = mission_coll(missions, MISSION)
    base_count = len([o for o in coll.all_objects if missions.props(o)])
    out["base_count"] = base_count
    out["added"] = add_assets(assets, missions, lib, index, coll)
    out["changed"] = change_rock(assets, missions, coll, index)
    target = os.path.join(os.path.dirname(MISSION), "Assets.01")
    os.makedirs(target, exist_ok=True)
    for f in os.listdir(MISSION):
        if f.lower() != "data.tma":
            shutil.copy(os.path.join(MISSION, f), os.path.join(target, f))
    written = os.path.join(target, "data.tma")
    # One more game object left outside the mission's collection: not
    # written, and the export says so by name.
    stray = assets.append_asset(lib, index["assets"][0]["name"], bpy.context.scene.collection)
    out["stray"] = stray.name
    from io_scene_parkan import reports
    seen = len(reports.history)
    out["export"] = export(missions, coll, written)
    out["export_warnings"] = [w for lvl, w in reports.history[seen:] if lvl == "WARNING"]
    out["written"] = written
    # Read back through the add-on: the new objects at their places.
    out["reimport"] = call(lambda: bpy.ops.import_scene.parkan_mission(filepath=target))
    back = mission_coll(missions, target)
    again = []
    for o in (back.all_objects if back else []):
        x = missions.props(o)
        if x and x["index"] >= base_count:
            again.append({"index": x["index"], "path": x["path"], "kind": x["kind"],
                          "location": vec(o.matrix_world.translation),
                          "turn": float(o.matrix_world.to_euler("XYZ").z)})
    out["reimported"] = sorted(again, key=lambda e: e["index"])
    # A model path typed by hand that the game does not have: refused.
    rock = next(o for o in sorted(back.all_objects, key=lambda o: o.name)
                if missions.props(o).get("kind") == 3)
    x = missions.props(rock)
    x["path"] = "s_crate_23"
    x.pop("path_b64", None)
    rock["parkan_object"] = json.dumps(x) if isinstance(rock["parkan_object"], str) else x
    bad = os.path.join(WORK, "refused.tma")
    out["refused"] = export(missions, back, bad)
    out["refused_written"] = os.path.exists(bad)


harness.run("ASSETS_TEST", main, out)
