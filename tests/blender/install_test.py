"""Install into the game and Restore the game through the add-on
(issue 37 item 5):

    blender -b --factory-startup --python tests/blender/install_test.py -- \\
        ADDON.zip GAME WORK_DIR LAND.msh DATA.tma

GAME is a copy of the game folder (LAND.msh and DATA.tma inside it). Two
rounds, each: LAND.msh imported (File > Import > Parkan model), its first
vertex moved +0.5 along Blender z, exported with File > Export > Parkan
model, "Install into the game" on (over LAND.msh itself); DATA.tma imported
(File > Import > Parkan mission), its first placed object moved +5 along
Blender x, exported with File > Export > Parkan mission, "Install into the
game" on (over DATA.tma itself); then File > Export > Parkan: restore the
game. Records, per round, each operator's result, its Info text, and the
SHA-256 of LAND.msh and DATA.tma after each step. Prints one line
`INSTALL_TEST {json}`; run by tests/shared_blender_install.rs in Blender
3.4.1 and the newest bpy.
"""

import hashlib
import os
import sys

import bpy
import mathutils

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402

ZIP, GAME, WORK, LAND, TMA = (os.path.abspath(a) for a in harness.args()[:5])
out = {"errors": [], "rounds": []}
check = harness.checker(out)


def sha(p):
    with open(p, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def call(fn):
    try:
        return list(fn())
    except RuntimeError as e:  # an ERROR report raises in background mode
        return ["ERROR", str(e)]


def last_info():
    from io_scene_parkan import reports
    infos = [t for lvl, t in reports.history if lvl == "INFO"]
    return infos[-1] if infos else ""


def clear():
    for o in list(bpy.data.objects):
        bpy.data.objects.remove(o)
    for c in list(bpy.data.collections):
        bpy.data.collections.remove(c)


def install_map(k, r):
    res = call(lambda: bpy.ops.import_scene.parkan_msh(filepath=LAND))
    if not check("FINISHED" in res, f"round {k}: import {LAND}: {res}"):
        return
    meshes = sorted((o for o in bpy.context.scene.objects if o.type == "MESH"),
                    key=lambda o: o.name)
    if not check(meshes, f"round {k}: no terrain mesh"):
        return
    o = meshes[0]
    p = (o.matrix_world @ o.data.vertices[0].co).copy()
    for m in meshes:
        inv = m.matrix_world.inverted()
        for w in m.data.vertices:
            if ((m.matrix_world @ w.co) - p).length < 1e-5:
                w.co = inv @ (p + mathutils.Vector((0.0, 0.0, 0.5)))
    r["map_install"] = call(lambda: bpy.ops.export_scene.parkan_msh(
        filepath=os.path.join(WORK, f"unused{k}.msh"), mode="BASE", install=True))
    r["map_info"] = last_info()
    r["land_after_install"] = sha(LAND)
    r["unused_written"] = os.path.exists(os.path.join(WORK, f"unused{k}.msh"))


def install_mission(k, r):
    from io_scene_parkan import missions
    from io_scene_parkan import scene as sc
    res = call(lambda: bpy.ops.import_scene.parkan_mission(filepath=TMA))
    if not check("FINISHED" in res, f"round {k}: import {TMA}: {res}"):
        return
    coll = next((c for c in bpy.data.collections if missions.RECORD in c.keys()), None)
    if not check(coll is not None, f"round {k}: no mission collection"):
        return
    placed = sorted((o for o in coll.all_objects if missions.props(o)),
                    key=lambda o: missions.props(o)["index"])
    if not check(placed, f"round {k}: no placed object"):
        return
    placed[0].matrix_world.translation += mathutils.Vector((5.0, 0.0, 0.0))
    bpy.context.view_layer.update()
    sc.set_active_collection(bpy.context, coll)
    r["mission_install"] = call(lambda: bpy.ops.export_scene.parkan_mission(
        filepath=os.path.join(WORK, f"unused{k}.tma"), install=True))
    r["mission_info"] = last_info()
    r["tma_after_install"] = sha(TMA)


def main():
    os.makedirs(WORK, exist_ok=True)
    out["blender"] = bpy.app.version_string
    if not harness.install_addon(ZIP, out):
        return
    out["land_before"], out["tma_before"] = sha(LAND), sha(TMA)
    for k in (1, 2):
        r = {}
        out["rounds"].append(r)
        install_map(k, r)
        clear()
        install_mission(k, r)
        clear()
        r["restore"] = call(lambda: bpy.ops.parkan.restore_game(game_dir=GAME))
        r["restore_info"] = last_info()
        r["land_after_restore"], r["tma_after_restore"] = sha(LAND), sha(TMA)
    # Nothing installed: restoring says so, and is no error.
    out["restore_empty"] = call(lambda: bpy.ops.parkan.restore_game(game_dir=GAME))
    out["restore_empty_info"] = last_info()


harness.run("INSTALL_TEST", main, out)
