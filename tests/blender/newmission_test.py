"""A new mission through the io_scene_parkan add-on in headless Blender
(issue 38 item 2).

    BLENDER_USER_SCRIPTS=TMP/scripts BLENDER_USER_CONFIG=TMP/config \\
    blender -b --factory-startup --python tests/blender/newmission_test.py -- \\
        ADDON.zip GAME

Run by tests/shared_blender_newmission.rs on a copy of the corpus (GAME,
with a hero unit file added). Installs the add-on; File > New > Parkan
mission (`parkan.new_mission`) from the template MISSIONS/Single.01 on the
map MAPS/m01, named "Iron Dawn": the new mission is imported (the map, two
clan empties, no placed objects). Then, as a modder would: places one
object of every kind (a building turned by 0.5 rad and a unit of the
player's clan, a unit of the enemy's, a tree, a rock scaled by 2), each a
mesh object carrying the asset library's placement template as its custom
property `parkan_asset` and its owner as `parkan_owner` (the contract of
the asset library, h/assets); moves the enemy's base by (+10, -10); adds a
route (Object > Add > Parkan route, `object.parkan_add_route`) at the
player's base; exports with File > Export > Parkan new mission
(`export_scene.parkan_new_mission`): refused, since the player has no hero;
exports with File > Export > Parkan mission (the ordinary edit, against
the new data.tma) to route_edit.tma beside GAME;
places the hero (a unit of UNITS\\UNITS\\HERO, the player's clan) and
exports again; imports the written mission again (File > Import > Parkan
mission) and lists every placed object where it stands. Prints one line
`NEWMISSION_TEST {json}`.
"""

import os
import sys

import bpy

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402

argv = harness.args()
ZIP, GAME = os.path.abspath(argv[0]), os.path.abspath(argv[1])
out = {"errors": []}
check = harness.checker(out)


def call(fn):
    """(result, error text) of an operator call (an ERROR report raises in
    background mode)."""
    try:
        return list(fn()), ""
    except RuntimeError as e:
        return ["CANCELLED"], str(e)


def props(types):
    """The placement template's property list (mission-notes §2.4) for a
    new object: the asset library's minimal set."""
    out = [{"name": "Invulnerability", "type": 0, "words": [0, 0, 1065353216]},
           {"name": "Life state", "type": 0, "words": [1065353216, 0, 1065353216]}]
    if types is not None:
        out += [{"name": "LogicalID", "type": 1, "words": [0, 0, 0]},
                {"name": "ClanID", "type": 1, "words": [0, 0, 4294967295]},
                {"name": "Type", "type": 1, "words": [types, types, types]}]
    return out


def place(coll, name, kind, path, owner, at, turn=0.0, scale=1.0, type_word=None):
    """A new placed object as the asset library makes it: a mesh object
    with `parkan_asset` (text: Blender's custom properties hold no u32)
    and `parkan_owner`."""
    me = bpy.data.meshes.new(name)
    me.from_pydata([(-1, -1, 0), (1, -1, 0), (0, 1, 0), (0, 0, 2)], [],
                   [(0, 1, 2), (0, 1, 3), (1, 2, 3), (2, 0, 3)])
    o = bpy.data.objects.new(name, me)
    stem = path.rsplit("\\", 1)[-1].rsplit(".", 1)[0]
    asset = {"kind": kind, "path": path, "instance_name": stem if kind <= 1 else "",
             "start_flag": 0, "properties": props(type_word if kind <= 1 else None)}
    o["parkan_asset"] = repr(asset)
    if owner:
        o["parkan_owner"] = owner
    o.location = at
    o.rotation_mode = "XYZ"
    o.rotation_euler = (0.0, 0.0, turn)
    o.scale = (scale, scale, scale)
    coll.objects.link(o)
    return {"name": o.name, "kind": kind, "path": path, "owner": owner,
            "at": list(at), "turn": turn, "scale": scale}


def placed_objects(coll, missions):
    res = []
    for o in coll.all_objects:
        x = missions.props(o)
        if x:
            t = o.matrix_world.translation
            res.append({"name": o.name, "kind": x.get("kind"), "path": x.get("path"),
                        "clan": x.get("clan"), "at": [t.x, t.y, t.z]})
    return sorted(res, key=lambda r: r["name"])


def main():
    import io_scene_parkan  # noqa: F401  (after install)
    from io_scene_parkan import missions, newmission
    from io_scene_parkan import scene as sc
    out["blender"] = bpy.app.version_string
    out["templates"] = newmission.game_missions(GAME)
    out["maps"] = newmission.game_maps(GAME)
    res, err = call(lambda: bpy.ops.parkan.new_mission(
        game_dir=GAME, template="MISSIONS/Single.01", map="MAPS/m01", name="Iron Dawn"))
    out["new_result"], out["new_error"] = res, err
    if not check("FINISHED" in res, f"new mission: {res} {err}"):
        return
    coll = next(c for c in bpy.data.collections if missions.RECORD in c.keys()
                and newmission.NEW_KEY in c[missions.RECORD].keys())
    rec = sc.idprop_dict(coll[missions.RECORD])
    out["folder"] = missions.parse_text(rec[newmission.NEW_KEY])["folder"]
    out["placed_after_new"] = len(placed_objects(coll, missions))
    clans = {}
    for o in coll.all_objects:
        c = missions.props(o, "parkan_clan")
        if c:
            clans[c["name"]] = o
    out["clans"] = {n: list(o.matrix_world.translation) for n, o in clans.items()}
    out["terrain"] = any(missions.props(o, "parkan_terrain_scene") for o in coll.all_objects)
    player, enemy = clans["Player"], clans["Clan I"]
    px, py, pz = player.matrix_world.translation
    objs = [
        place(coll, "New bunker", 0, "UNITS\\BUILDS\\BUNKER\\mbunk01.dat", "Player",
              (px + 30.0, py + 10.0, pz), turn=0.5, type_word=0x80020000),
        place(coll, "New walker", 1, "UNITS\\BATTLE\\w_b_wlk1.dat", "Player",
              (px - 20.0, py + 5.0, pz), type_word=0x01008000),
        place(coll, "Enemy tank", 1, "UNITS\\BATTLE\\w_m_trk2.dat", "Clan I",
              tuple(enemy.matrix_world.translation), type_word=0x01008000),
        place(coll, "New bush", 2, "st_s_bush_63", None, (px + 5.0, py - 25.0, pz)),
        place(coll, "New rock", 3, "st_s_rock_75", None, (px - 15.0, py - 15.0, pz), scale=2.0),
    ]
    enemy.location.x += 10.0
    enemy.location.y -= 10.0
    out["enemy_base"] = [enemy.location.x, enemy.location.y]
    sc.set_active_collection(bpy.context, coll)
    bpy.context.scene.cursor.location = (px, py, pz)
    res, err = call(lambda: bpy.ops.object.parkan_add_route(size=30.0))
    out["route_result"] = res
    route = next(o for o in coll.all_objects if o.name.startswith("New route"))
    bpy.context.view_layer.update()
    out["route_points"] = [list(route.matrix_world @ v.co) for v in route.data.vertices]
    sc.set_active_collection(bpy.context, coll)
    res, err = call(lambda: bpy.ops.export_scene.parkan_new_mission())
    out["heroless_result"], out["heroless_error"] = res, err
    # The same scene through the ordinary edit (File > Export > Parkan
    # mission against the new data.tma): no hero rule; the route and base.
    edit = os.path.join(os.path.dirname(GAME), "route_edit.tma")
    sc.set_active_collection(bpy.context, coll)
    res, err = call(lambda: bpy.ops.export_scene.parkan_mission(filepath=edit))
    out["edit_result"], out["edit_error"], out["edit"] = res, err, edit
    objs.append(place(coll, "Hero", 1, "UNITS\\UNITS\\HERO\\hero01.dat", "Player",
                      (px, py + 20.0, pz), turn=1.0, type_word=0x01020000))
    out["objects"] = objs
    bpy.context.view_layer.update()
    sc.set_active_collection(bpy.context, coll)
    res, err = call(lambda: bpy.ops.export_scene.parkan_new_mission())
    out["export_result"], out["export_error"] = res, err
    if not check("FINISHED" in res, f"export: {res} {err}"):
        return
    tma = os.path.join(out["folder"], "data.tma")
    before = set(bpy.data.collections)
    res, err = call(lambda: bpy.ops.import_scene.parkan_mission(filepath=tma, textures=False))
    out["reimport_result"] = res
    again = next(c for c in bpy.data.collections if c not in before and missions.RECORD in c.keys())
    out["reimported"] = placed_objects(again, missions)


if harness.install_addon(ZIP, out):
    harness.run("NEWMISSION_TEST", main, out)
else:
    print("NEWMISSION_TEST " + __import__("json").dumps(out), flush=True)
