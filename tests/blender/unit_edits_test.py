"""Unit part edits through the io_scene_parkan add-on (issue 24 item 5).

    BLENDER_USER_SCRIPTS=TMP/scripts BLENDER_USER_CONFIG=TMP/config \\
    blender -b --factory-startup --python tests/blender/unit_edits_test.py -- \\
        ADDON.zip UNIT.dat WORK_DIR

Run by tests/shared_blender_unit_edits.rs, which checks the archives written
with the project's own decoder. Steps: install and enable the add-on; import
UNIT.dat through File > Import > Parkan unit; export it through File >
Export > Parkan model (mode "Edit of the imported model"):
  WORK/unedited/  as imported (nothing may be written there);
  WORK/added/     a new one-triangle mesh object put in the unit's own
                  collection (in no part's): nothing written, a warning
                  naming it; then removed again;
  WORK/moved/     one mesh object of a part mounted once (not the chassis)
                  moved +0.25 along its local x and keyed where it is
                  animated, so the move holds at every frame;
  WORK/scaled/    then the roots of the first part other parts hang on
                  (not the chassis) scaled x1.5 in Object mode;
  installed       then the same with Install into the game: the game's own
                  archives written in place (`installed` lists the game
                  files changed, new and gone).
Prints one line `UNIT_EDITS {json}` (`errors` lists what failed; `moved`
names the part, its archive entry and the object's Res1 node).
"""

import os
import sys

import bpy

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402

argv = harness.args()
ZIP, DAT, WORK = os.path.abspath(argv[0]), os.path.abspath(argv[1]), os.path.abspath(argv[2])
out = {"errors": [], "exports": {}, "reports": {}}


check = harness.checker(out)


def export(ctx, obj, name):
    """The add-on's export with one of the unit's objects active (as a
    modder leaves it after editing), to WORK/name/unit.msh."""
    folder = os.path.join(WORK, name)
    os.makedirs(folder, exist_ok=True)
    ctx.view_layer.objects.active = obj
    try:
        r = bpy.ops.export_scene.parkan_msh(filepath=os.path.join(folder, "unit.msh"), mode="BASE")
        out["exports"][name] = list(r)
    except RuntimeError as e:
        out["exports"][name] = ["ERROR", str(e)]


def msh_prop(o):
    from io_scene_parkan import units
    return units.msh_props(o)


def pick(coll):
    """A mesh object with a Res1 node in a part mounted once, not the chassis."""
    parts = {}
    for c in coll.children:
        k, _, record = c.name.partition(" ")
        if k.isdigit():
            parts[int(k)] = (record, c)
    records = [r for r, _ in parts.values()]
    for k in sorted(parts):
        record, c = parts[k]
        if k == 0 or records.count(record) > 1:
            continue
        for o in sorted(c.objects, key=lambda o: o.name):
            p = msh_prop(o)
            if o.type == "MESH" and "node" in p and "control_point" not in p:
                return k, record, o
    return None


def main():
    out["blender"] = bpy.app.version_string
    harness.install_addon(ZIP, out)
    ctx = bpy.context
    r = bpy.ops.import_scene.parkan_unit(filepath=DAT, fps=24.0, textures=False)
    check("FINISHED" in r, f"import: {r}")
    stem = os.path.splitext(os.path.basename(DAT))[0]
    coll = bpy.data.collections.get(stem)
    if not check(coll is not None, f"no collection {stem}"):
        return
    hit = pick(coll)
    if not check(hit is not None, "no mesh object in a part mounted once"):
        return
    k, record, obj = hit
    out["moved"] = {"part": k, "record": record, "object": obj.name,
                    "node": int(msh_prop(obj)["node"])}

    export(ctx, obj, "unedited")
    add_an_object(ctx, coll, obj)

    # Moved +0.25 on its local x; an animated object gets the move on every
    # key (Graph editor: select all, G X 0.25), a static one on its location.
    ad = obj.animation_data
    from io_scene_parkan import edits
    curves = [fc for fc in edits.action_fcurves(obj) if fc.data_path == "location" and fc.array_index == 0]
    if curves:
        for fc in curves:
            for kp in fc.keyframe_points:
                kp.co.y += 0.25
                kp.handle_left.y += 0.25
                kp.handle_right.y += 0.25
            fc.update()
        ctx.scene.frame_set(ctx.scene.frame_current)
    else:
        obj.location.x += 0.25
    out["moved"]["animated"] = bool(curves) and ad is not None
    export(ctx, obj, "moved")
    scale_a_host(ctx, coll)
    install(ctx, coll)


def add_an_object(ctx, coll, obj):
    """A mesh of no part: exported to WORK/added, then deleted."""
    mesh = bpy.data.meshes.new("added_plate")
    mesh.from_pydata([(0.0, 0.0, 0.0), (1.0, 0.0, 0.0), (0.0, 1.0, 0.0)], [], [(0, 1, 2)])
    extra = bpy.data.objects.new("added_plate", mesh)
    coll.objects.link(extra)
    export(ctx, obj, "added")
    out["added"] = extra.name
    bpy.data.objects.remove(extra)
    bpy.data.meshes.remove(mesh)


def roots_of(c):
    """A part collection's objects hanging on nothing of their own part."""
    return [o for o in c.objects if o.parent is None or o.parent.name not in c.objects]


def scale_a_host(ctx, coll):
    """Scales x1.5 (Object mode) the roots of the first part after the
    chassis that other parts hang on, and exports to WORK/scaled: its model
    is written, the parts on it are shown scaled but keep their size in the
    game (a warning each)."""
    parts = {int(c.name.split(" ")[0]): c for c in coll.children if c.name.split(" ")[0].isdigit()}
    hosts = {}
    for k, c in parts.items():
        for o in roots_of(c):
            for h, ch in parts.items():
                if h != k and o.parent is not None and o.parent.name in ch.objects:
                    hosts.setdefault(h, set()).add(k)
    host = min((h for h in hosts if h != 0), default=None)
    if not check(host is not None, "no part (besides the chassis) carries another"):
        return
    roots = roots_of(parts[host])
    for o in roots:
        o.scale = (1.5, 1.5, 1.5)
    out["scaled"] = {"part": host, "mounted": sorted(hosts[host])}
    export(ctx, roots[0], "scaled")


def snapshot(folder):
    return {os.path.relpath(os.path.join(r, f), folder): open(os.path.join(r, f), "rb").read()
            for r, _, fs in os.walk(folder) for f in fs}


def install(ctx, coll):
    """Export with Install into the game (the game's own archives, in
    place): records which game files changed and which appeared."""
    game = os.path.dirname(os.path.dirname(os.path.dirname(DAT)))
    before = snapshot(game)
    ctx.view_layer.objects.active = next(iter(roots_of(coll.children[0])), None)
    try:
        r = bpy.ops.export_scene.parkan_msh(filepath=os.path.join(WORK, "unused.msh"), mode="BASE",
                                            install=True)
        out["exports"]["installed"] = list(r)
    except RuntimeError as e:
        out["exports"]["installed"] = ["ERROR", str(e)]
    after = snapshot(game)
    # The commit's lock files (docs/safety.md: `.NAME.mshgltf-lock`, left
    # in place) are listed apart.
    lock = [k for k in after if k not in before and k.endswith(".mshgltf-lock")]
    out["installed"] = {"changed": sorted(k for k in after if k in before and after[k] != before[k]),
                        "new": sorted(k for k in after if k not in before and k not in lock),
                        "gone": sorted(k for k in before if k not in after),
                        "locks": sorted(lock)}


harness.run("UNIT_EDITS", main, out)
sys.stdout.flush()
