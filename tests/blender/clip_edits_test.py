"""Clip edits through the io_scene_parkan add-on (issue 24 item 4).

    BLENDER_USER_SCRIPTS=TMP/scripts BLENDER_USER_CONFIG=TMP/config \\
    blender -b --factory-startup --python tests/blender/clip_edits_test.py -- \\
        ADDON.zip ARCHIVE ENTRY CLIP WORK_DIR

Run by tests/shared_blender_clip_edits.rs, which checks the written models
with the project's own decoder. Steps: install and enable the add-on; import
ENTRY through File > Import; record, per object, its NLA tracks, its
timeline keys and its clips (the reversed clip CLIP must start where the
game starts it); export through File > Export (mode "Edit of the imported
model"):
  unedited.msh      as imported;
  clip_nla.msh      a location key of CLIP's action, on its NLA track,
                    moved +0.25 along z (the first whole clip frame inside);
  clip_active.msh   the clip action made active, a key moved +0.25 along z
                    (the last whole clip frame inside);
  clip_outside.msh  a key added past the clip's end (refused, naming it).
Prints one line `CLIP_EDITS {json}` (`errors` lists what failed).
"""

import os
import sys

import bpy

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402

argv = harness.args()
ZIP, ARCHIVE, ENTRY, CLIP, WORK = (os.path.abspath(argv[0]), os.path.abspath(argv[1]), argv[2],
                                   argv[3], os.path.abspath(argv[4]))
out = {"errors": [], "exports": {}, "objects": {}}


check = harness.checker(out)


def export(ctx, coll, name):
    from io_scene_parkan import scene as sc
    sc.set_active_collection(ctx, coll)
    try:
        r = bpy.ops.export_scene.parkan_msh(filepath=os.path.join(WORK, name), mode="BASE")
        out["exports"][name] = list(r)
    except RuntimeError as e:
        out["exports"][name] = ["ERROR", str(e)]


def keys(fcs, path, index=0):
    fc = next((f for f in fcs if f.data_path == path and f.array_index == index), None)
    return [] if fc is None else [k for k in fc.keyframe_points]


def describe(o):
    """NLA tracks, timeline key counts and clips of one object."""
    from io_scene_parkan import clips, scene as sc
    ad = o.animation_data
    d = {"node": sc.msh_props(o).get("node"), "tracks": [], "clips": {}}
    if ad is None:
        return d
    d["tracks"] = [[t.name, bool(t.mute)] for t in ad.nla_tracks]
    tl = clips.fcurves_of(ad.action, getattr(ad, "action_slot", None))
    d["timeline_rotation_keys"] = len(keys(tl, "rotation_quaternion"))
    d["timeline_location_keys"] = len(keys(tl, "location"))
    for act, slot in clips.clip_actions(o):
        fcs = clips.fcurves_of(act, slot)
        d["clips"][act["parkan_clip"]["name"]] = {
            "time": list(act.get("parkan_clip_time", [])),
            "location_keys": [k.co.x for k in keys(fcs, "location", 2)],
        }
    return d


def clip_fcurve(o, act, slot, index=2):
    from io_scene_parkan import clips
    return next(f for f in clips.fcurves_of(act, slot)
                if f.data_path == "location" and f.array_index == index)


def nudge(fc, frame, d):
    for k in fc.keyframe_points:
        if abs(k.co.x - frame) < 1e-4:
            k.co.y += d
            k.handle_left.y += d
            k.handle_right.y += d
            fc.update()
            return True
    return False


def pick(objs):
    """An object whose CLIP action keys location z at two whole clip frames
    strictly inside the clip: (object, action, slot, frame, frame)."""
    from io_scene_parkan import clips
    for o in objs:
        for act, slot in clips.clip_actions(o):
            if act["parkan_clip"].get("name") != CLIP:
                continue
            n = abs(act["parkan_clip_time"][1] - act["parkan_clip_time"][0])
            xs = [k.co.x for k in clip_fcurve(o, act, slot).keyframe_points]
            xs = [x for x in xs if 0 < x < n and abs(x - round(x)) < 1e-4]
            if len(xs) >= 2:
                return o, act, slot, round(xs[0]), round(xs[-1])
    return None


def game_direction(o, act, slot):
    """The reversed clip starts where the game starts it: its value at clip
    frame 0 is the timeline's at the clip's start frame."""
    from io_scene_parkan import clips
    start = float(act["parkan_clip_time"][0])
    tl = clips.fcurves_of(o.animation_data.action, getattr(o.animation_data, "action_slot", None))
    for i in range(3):
        a = clip_fcurve(o, act, slot, i).evaluate(0.0)
        fc = next((f for f in tl if f.data_path == "location" and f.array_index == i), None)
        b = fc.evaluate(start) if fc else o.location[i]
        check(abs(a - b) < 1e-4, f"{CLIP} location[{i}] at clip frame 0: {a} vs timeline {b} "
                                 f"at frame {start}")


def main():
    os.makedirs(WORK, exist_ok=True)
    out["blender"] = bpy.app.version_string
    harness.install_addon(ZIP, out)
    ctx = bpy.context
    r = bpy.ops.import_scene.parkan_msh(filepath=ARCHIVE, entry_name=ENTRY, fps=24.0)
    check("FINISHED" in r, f"import: {r}")
    coll = bpy.data.collections.get(os.path.splitext(ENTRY)[0])
    if not check(coll is not None, "no collection"):
        return
    objs = sorted(coll.all_objects, key=lambda o: o.name)
    for o in objs:
        out["objects"][o.name] = describe(o)
    export(ctx, coll, "unedited.msh")

    hit = pick(objs)
    if not check(hit is not None, f"no object keys {CLIP} at two whole clip frames"):
        return
    o, act, slot, x1, x2 = hit
    game_direction(o, act, slot)
    ct = act["parkan_clip_time"]
    d = -1.0 if ct[1] < ct[0] else 1.0
    out["edit"] = {"object": o.name, "node": out["objects"][o.name]["node"], "clip": CLIP,
                   "start": ct[0], "end": ct[1],
                   "nla_frame": ct[0] + d * x1, "active_frame": ct[0] + d * x2}

    fc = clip_fcurve(o, act, slot)
    check(nudge(fc, x1, 0.25), f"no key at clip frame {x1}")
    export(ctx, coll, "clip_nla.msh")
    nudge(fc, x1, -0.25)

    ad = o.animation_data
    timeline = ad.action
    ad.action = act
    if slot is not None and getattr(ad, "action_slot", None) != slot:
        ad.action_slot = slot
    fc = clip_fcurve(o, act, slot)
    check(nudge(fc, x2, 0.25), f"no key at clip frame {x2}")
    export(ctx, coll, "clip_active.msh")
    nudge(fc, x2, -0.25)
    check(ad.action == act, "the export left the clip action active")
    ad.action = timeline

    fc = clip_fcurve(o, act, slot)
    n = len(fc.keyframe_points)
    fc.keyframe_points.insert(abs(ct[1] - ct[0]) + 5.0, fc.evaluate(0.0))
    check(len(fc.keyframe_points) == n + 1, "key past the clip's end not inserted")
    export(ctx, coll, "clip_outside.msh")


harness.run("CLIP_EDITS", main, out)
