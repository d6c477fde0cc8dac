"""Routes, clans and owners through the io_scene_parkan add-on (issue 37
item 4) in headless Blender.

    BLENDER_USER_SCRIPTS=TMP/scripts BLENDER_USER_CONFIG=TMP/config \\
    blender -b --factory-startup --python tests/blender/clans_test.py -- \\
        ADDON.zip MISSION_DIR OUT_TMA

Run by tests/shared_blender_clans.rs on a copy of the corpus. Imports
MISSION_DIR (File > Import > Parkan mission) and checks one clan collection
per clan holding the buildings and units it owns. In the route with the
most points it moves point 0 by (+4, +2, 0), inserts a point in the edge
from point 1 to point 2 (its midpoint, then +3 along y) and deletes the
last point (its two edges replaced by one, as Dissolve Vertices does).
Adds a clan with Add > Parkan clan ("Clan Z", enemy, 7 minds) at the 3D
cursor (300, 400, 0); a unit outside any building linked into both the new
clan's collection and its own clan's is refused on export, naming it; then
moved out of its own clan's collection into the new one and moved by +6
along x; its former clan renamed "Raiders" with Object > Rename Parkan clan
(a rename to another clan's name, in upper case, refused first); exports (File > Export > Parkan mission) to OUT_TMA. Then imports
OUT_TMA (a mission folder of the game copy) and reports the new clan's
collection's objects and the route's point count. Prints one line
`CLANS_TEST {json}`.
"""

import os
import sys

import bpy

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
import mathutils  # noqa: E402

argv = harness.args()
ZIP, MISSION, OUT = os.path.abspath(argv[0]), os.path.abspath(argv[1]), os.path.abspath(argv[2])
out = {"errors": []}
check = harness.checker(out)


def messages(fn):
    try:
        return list(fn())
    except RuntimeError as e:  # an ERROR report raises in background mode
        return ["ERROR", str(e)]


def import_mission(path):
    before = {c for c in bpy.data.collections}
    res = messages(lambda: bpy.ops.import_scene.parkan_mission(filepath=path, textures=False))
    from io_scene_parkan import missions
    new = [c for c in bpy.data.collections if c not in before and missions.RECORD in c.keys()]
    return res, (new[0] if new else None)


def clan_members(missions, coll):
    """{clan name: sorted object indices in its collection}."""
    return {name: sorted(missions.props(o)["index"] for o in c.objects if missions.props(o))
            for c, name in missions.clan_collections(coll).items()}


def edit_route(missions, coll):
    """Move point 0, insert a point after point 1, delete the last point."""
    import bmesh
    routes = [o for o in coll.all_objects if missions.props(o, "parkan_route")]
    route = max(routes, key=lambda o: (len(o.data.vertices), -missions.props(o, "parkan_route")["index"]))
    me = route.data
    bm = bmesh.new()
    bm.from_mesh(me)
    bm.verts.ensure_lookup_table()
    n = len(bm.verts)
    v = list(bm.verts)
    v[0].co += mathutils.Vector((4.0, 2.0, 0.0))
    # Insert: split the edge 1-2 at its midpoint, then move the new point.
    e12 = next(e for e in bm.edges if {x.index for x in e.verts} == {1, 2})
    mid = (v[1].co + v[2].co) / 2
    nv = bm.verts.new(mid + mathutils.Vector((0.0, 3.0, 0.0)))
    bm.edges.remove(e12)
    bm.edges.new((v[1], nv))
    bm.edges.new((nv, v[2]))
    # Delete the last point: its neighbours joined.
    last = v[n - 1]
    nb = [e.other_vert(last) for e in last.link_edges]
    bm.verts.remove(last)
    bm.edges.new((nb[0], nb[1]))
    bm.to_mesh(me)
    bm.free()
    me.update()
    w = route.matrix_world
    return {"route": route.name, "route_index": missions.props(route, "parkan_route")["index"],
            "route_points_before": n, "route_points_after": len(me.vertices),
            "route_world_identity": all(abs(w[i][j] - (1.0 if i == j else 0.0)) < 1e-9
                                        for i in range(4) for j in range(4))}


def main():
    harness.install_addon(ZIP, out)
    out["blender"] = bpy.app.version_string
    from io_scene_parkan import missions, scene as sc
    res, coll = import_mission(MISSION)
    out["import_result"] = res
    if not check(coll is not None, f"no mission collection ({res})"):
        return
    out["members"] = clan_members(missions, coll)
    out["route_edit"] = edit_route(missions, coll)
    # Add > Parkan clan at the 3D cursor, with the mission active.
    sc.set_active_collection(bpy.context, coll)
    bpy.context.scene.cursor.location = (300.0, 400.0, 0.0)
    out["add_clan"] = messages(lambda: bpy.ops.object.parkan_add_clan(
        name="Clan Z", clan_type="2", minds=7))
    out["add_clan_again"] = messages(lambda: bpy.ops.object.parkan_add_clan(
        name="clan z", clan_type="1"))
    ccs = {name: c for c, name in missions.clan_collections(coll).items()}
    new_cc = ccs.get("Clan Z")
    if not check(new_cc is not None, f"no collection for the new clan: {sorted(ccs)}"):
        return
    placed = sorted((o for o in coll.all_objects if missions.props(o)),
                    key=lambda o: missions.props(o)["index"])
    unit = next(o for o in placed
                if missions.props(o)["kind"] == 1 and missions.props(o)["host"] == -1)
    x = missions.props(unit)
    out["unit"] = {"index": x["index"], "name": unit.name, "clan": x["clan"],
                   "location": list(unit.matrix_world.translation)}
    own = next(c for c, name in missions.clan_collections(coll).items()
               if unit.name in c.objects)
    # In two clan collections: refused, naming it.
    new_cc.objects.link(unit)
    sc.set_active_collection(bpy.context, coll)
    out["two_owners"] = messages(lambda: bpy.ops.export_scene.parkan_mission(
        filepath=OUT, replace_file=True))
    out["two_owners_wrote"] = os.path.isfile(OUT)
    own.objects.unlink(unit)
    unit.matrix_world.translation += mathutils.Vector((6.0, 0.0, 0.0))
    bpy.context.view_layer.update()
    out["unit"]["moved_to"] = list(unit.matrix_world.translation)
    # Object > Rename Parkan clan on the unit's (former) clan's empty: a
    # taken name (another clan's, in upper case) refused, then "Raiders".
    empty = next(o for o in coll.all_objects
                 if missions.props(o, "parkan_clan").get("index") == x["clan"])
    other = next(name for c, name in missions.clan_collections(coll).items()
                 if c is not own and name != "Clan Z")
    bpy.context.view_layer.objects.active = empty
    sc.set_active_collection(bpy.context, coll)
    out["rename_taken"] = messages(lambda: bpy.ops.object.parkan_rename_clan(name=other.upper()))
    out["rename"] = messages(lambda: bpy.ops.object.parkan_rename_clan(name="Raiders"))
    out["renamed"] = {"empty": empty.name, "extras_name": missions.props(empty, "parkan_clan").get("name"),
                      "collection": own.name, "collection_clan": own.get(missions.CLAN_COLL)}
    sc.set_active_collection(bpy.context, coll)
    out["export"] = messages(lambda: bpy.ops.export_scene.parkan_mission(
        filepath=OUT, replace_file=True))
    out["owner_left"] = [o.name for o in bpy.data.objects if missions.OWNER in o.keys()]
    # Re-import the written mission.
    res, again = import_mission(OUT)
    out["reimport_result"] = res
    if not check(again is not None, f"re-import: no mission collection ({res})"):
        return
    out["reimport_members"] = clan_members(missions, again)
    r = [o for o in again.all_objects if missions.props(o, "parkan_route")
         and missions.props(o, "parkan_route")["index"] == out["route_edit"]["route_index"]]
    out["reimport_route_points"] = len(r[0].data.vertices) if r else None


harness.run("CLANS_TEST", main, out)
