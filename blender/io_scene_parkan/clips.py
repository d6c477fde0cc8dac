"""Animation clips in Blender and back (issue 24 item 4; unit-files-notes
§1.7).

msh2gltf writes the model's whole timeline as one glTF animation and each
clip of its `.ctl` as another, keyed in clip time: 0 at the frame the game
starts the clip from, so a reversed clip plays in the game's direction
(`extras.msh.start` / `extras.msh.end` are the timeline frames of the
clip's first and last key).

Import (`organize`): the timeline action stays active; each clip's action
goes on a muted NLA track named after the clip, with the clip's source in
the action's `parkan_clip` and its timeline frames in `parkan_clip_time`
(start, end, fps). The rotation keys msh2gltf adds so that Blender's
component-wise quaternion interpolation stays on the engine's curve
(`extras.msh.densified`) are removed (`collapse_densified`): a modder sees
one key per stored key, and the glTF export's LINEAR keys (slerp) give the
engine's curve back.

Export (`append_clips`): Blender's glTF exporter writes only the active
(timeline) actions; every clip action of the exported objects, on its NLA
track or made active, is appended to the GLB as its own animation with the
clip's extras, keys in clip time. gltf2msh writes an edited clip into the
timeline over the clip's frames only and refuses keys outside them, naming
the clip. A clip action made active is swapped back for the timeline while
Blender exports (`timeline_active`), so frames outside the clip keep the
timeline.
"""

import math
import struct

from . import compat
from . import scene as sc
from . import tools

# The clip frame rule, once (gltf_export::msh_extras::ClipTime): a clip
# action is keyed in clip time, action frame = clip time × scene fps (0 at
# the timeline frame the game starts the clip from, `ClipTime.start`), and
# its NLA strip plays action frame f at scene frame CLIP_ZERO + f, so a
# soloed clip track shows clip frame f at scene frame f, as the timeline
# shows game frame f at scene frame f (the import's frame_start is 0).
# Blender's glTF importer stashes a clip at the scene's start frame (1 in a
# new scene): `place_strips` moves it. `append_clips` writes clip time back
# as `clip_seconds` of the action's frames.
CLIP_ZERO = 0


def strip_start(act):
    """The scene frame a clip action's NLA strip starts at: its first key's
    action frame, from CLIP_ZERO."""
    return CLIP_ZERO + int(round(act.frame_range[0]))


def clip_seconds(frame, scene_fps):
    """glTF clip time (seconds) of an action frame of a clip action."""
    return frame / scene_fps


def place_strips(track, act):
    """Each strip of `track` playing `act` made to start at `strip_start`
    (recreated there, with its slot, when it starts elsewhere)."""
    for s in list(track.strips):
        if s.action != act:
            continue
        if abs(s.frame_start - strip_start(act)) < 1e-6 \
                and abs(s.action_frame_start - round(act.frame_range[0])) < 1e-6:
            continue
        name, slot = s.name, getattr(s, "action_slot", None)
        track.strips.remove(s)
        new = track.strips.new(name, strip_start(act), act)
        if slot is not None and getattr(new, "action_slot", None) != slot:
            try:
                new.action_slot = slot
            except (AttributeError, TypeError, RuntimeError):
                pass


def clip_table(j):
    """glTF animation name -> {"clip": source, "start", "end", "fps"} for
    clip animations (`extras.msh.clip`); None for the timeline."""
    out = {}
    for a in j.get("animations", []):
        m = a.get("extras", {}).get("msh", {})
        out[a.get("name", "")] = ({"clip": m["clip"], "start": m.get("start"), "end": m.get("end"),
                                   "fps": m.get("fps")} if m.get("clip") is not None else None)
    return out


def source_animation(action_name, names):
    """The glTF animation an action came from: the longest animation name
    the action's name starts with (Blender 3.x names them
    `<animation>_<object>`, 4.4+ `<animation>`)."""
    hits = [n for n in names if n and action_name.startswith(n)]
    return max(hits, key=len) if hits else None


def fcurves_of(act, slot=None):
    """The F-curves of `act` for one object (`compat.fcurves`: the action's
    own up to 4.3, the channel bag of `slot` in 4.4+'s layered actions)."""
    return compat.fcurves(act, slot)


def organize(objects, j):
    """Timeline actions active, clip actions on muted NLA tracks named after
    the clip (module docs); each object remembers its timeline action in
    `parkan_timeline`. Returns {clip name: number of actions}."""
    table = clip_table(j)
    clips = {}
    for o in objects:
        ad = o.animation_data
        if ad is None:
            continue
        actions = ([ad.action] if ad.action else []) + [s.action for t in ad.nla_tracks
                                                        for s in t.strips if s.action]
        timeline = None
        for act in actions:
            name = source_animation(act.name, table.keys())
            clip = table.get(name) if name else None
            if clip is None:
                timeline = timeline or act
                continue
            info = {k: v for k, v in clip["clip"].items() if isinstance(v, (int, float, str))}
            act["parkan_clip"] = dict(info, name=name)
            if clip["start"] is not None and clip["end"] is not None:
                act["parkan_clip_time"] = [float(clip["start"]), float(clip["end"]),
                                           float(clip["fps"] or 24.0)]
            act.use_fake_user = True
            clips[name] = clips.get(name, 0) + 1
            if not any(s.action == act for t in ad.nla_tracks for s in t.strips):
                track = ad.nla_tracks.new()
                track.strips.new(name, strip_start(act), act)
            for t in ad.nla_tracks:
                if any(s.action == act for s in t.strips):
                    t.name, t.mute = name, True
                    place_strips(t, act)
        ad.action = timeline
        if timeline is not None:
            o["parkan_timeline"] = timeline.name
    return clips


def node_objects(objects, j):
    """{glTF node index: object} by the node extras' Res1 index
    (`msh.node`), else by name."""
    msh_props = sc.msh_props
    by_name = {o.name: o for o in objects}
    out = {}
    for i, n in enumerate(j.get("nodes", [])):
        hit = [o for o in objects if msh_props(o).get("node") == i
               and "control_point" not in msh_props(o) and "cell" not in msh_props(o)]
        o = hit[0] if len(hit) == 1 else by_name.get(n.get("name"))
        if o is not None:
            out[i] = o
    return out


def remove_keys_at(fcurves, frames, tol=1e-3):
    """Removes the keyframes of `fcurves` at `frames`; returns how many."""
    n = 0
    for fc in fcurves:
        if fc.data_path not in ("location", "rotation_quaternion"):
            continue
        pts = fc.keyframe_points
        for k in reversed(range(len(pts))):
            x = pts[k].co.x
            if any(abs(x - f) < tol for f in frames):
                pts.remove(pts[k], fast=True)
                n += 1
        fc.update()
    return n


def collapse_densified(objects, j, frame_scale):
    """Removes the timeline's (and each clip's) densified rotation keys
    (`extras.msh.densified`; module docs). `frame_scale` = Blender frames
    per game frame. Returns the number of keys removed."""
    timeline = next((a for a in j.get("animations", [])
                     if a.get("extras", {}).get("msh", {}).get("clip") is None), None)
    dens = ((timeline or {}).get("extras") or {}).get("msh", {}).get("densified") or {}
    if not dens:
        return 0
    nodes = node_objects(objects, j)
    removed = 0
    for key, frames in dens.items():
        o = nodes.get(int(key))
        ad = o.animation_data if o is not None else None
        if ad is None:
            continue
        removed += remove_keys_at(fcurves_of(ad.action, compat.action_slot(ad)),
                                  [f * frame_scale for f in frames])
        for t in ad.nla_tracks:
            for s in t.strips:
                ct = s.action.get("parkan_clip_time") if s.action else None
                if ct is None:
                    continue
                start, end = float(ct[0]), float(ct[1])
                d = -1.0 if end < start else 1.0
                lo, hi = min(start, end), max(start, end)
                inside = [(f - start) * d * frame_scale for f in frames if lo < f < hi]
                removed += remove_keys_at(fcurves_of(s.action, compat.action_slot(s)),
                                          inside)
    return removed


def clip_actions(o):
    """[(action, slot)] of the clip actions on `o`: its NLA strips' and its
    active action when that is a clip."""
    ad = o.animation_data
    if ad is None:
        return []
    out = []
    if ad.action is not None and ad.action.get("parkan_clip") is not None:
        out.append((ad.action, compat.action_slot(ad)))
    for t in ad.nla_tracks:
        for s in t.strips:
            if s.action is not None and s.action.get("parkan_clip") is not None \
                    and all(s.action != a for a, _ in out):
                out.append((s.action, compat.action_slot(s)))
    return out


class timeline_active:
    """Context: objects whose active action is a clip get their timeline
    action (`parkan_timeline`) back while Blender exports; restored after.
    `swapped` lists (object name, clip name)."""

    def __init__(self, objects, actions):
        self.objects, self.actions, self.swapped, self._undo = objects, actions, [], []

    def __enter__(self):
        for o in self.objects:
            ad = o.animation_data
            if ad is None or ad.action is None or ad.action.get("parkan_clip") is None:
                continue
            tl = self.actions.get(o.get("parkan_timeline", ""))
            slot = compat.action_slot(ad)
            self._undo.append((o, ad.action, slot))
            self.swapped.append((o.name, ad.action["parkan_clip"].get("name", ad.action.name)))
            ad.action = tl
        return self

    def __exit__(self, *exc):
        for o, act, slot in self._undo:
            o.animation_data.action = act
            if slot is not None and compat.action_slot(o.animation_data) != slot:
                try:
                    o.animation_data.action_slot = slot
                except (AttributeError, TypeError, RuntimeError):
                    pass
        return False


def _gltf_loc(v):
    return [v[0], v[2], -v[1]]


def _gltf_quat(q):
    w, x, y, z = q
    n = math.sqrt(w * w + x * x + y * y + z * z) or 1.0
    return [x / n, z / n, -y / n, w / n]


def sample_path(fcurves, path, width):
    """(Blender frames, values in glTF axes) of one transform path of a clip
    action: its keys when every key is LINEAR, else every whole frame
    between the first and last key (what Blender shows); None without
    keys."""
    fcs = [None] * width
    for fc in fcurves:
        if fc.data_path == path and 0 <= fc.array_index < width and not fc.mute:
            fcs[fc.array_index] = fc
    if all(fc is None for fc in fcs):
        return None
    keys = sorted({round(p.co.x, 4) for fc in fcs if fc for p in fc.keyframe_points})
    if not keys:
        return None
    linear = all(p.interpolation == "LINEAR" for fc in fcs if fc for p in fc.keyframe_points)
    if not linear:
        keys = sorted(set(keys) | set(range(math.ceil(keys[0]), math.floor(keys[-1]) + 1)))
    rest = [1.0, 0.0, 0.0, 0.0] if width == 4 else [0.0, 0.0, 0.0]
    vals = []
    for f in keys:
        v = [fc.evaluate(f) if fc else rest[i] for i, fc in enumerate(fcs)]
        vals.append(_gltf_quat(v) if width == 4 else _gltf_loc(v))
    if width == 4:  # sign continuity (glTF slerp takes the short way as the engine does)
        for k in range(1, len(vals)):
            if sum(a * b for a, b in zip(vals[k - 1], vals[k])) < 0:
                vals[k] = [-c for c in vals[k]]
    return keys, vals


def _accessor(doc, binary, floats, ty, count, minmax=False):
    while len(binary) % 4:
        binary.append(0)
    off = len(binary)
    binary += struct.pack(f"<{len(floats)}f", *floats)
    doc.setdefault("bufferViews", []).append({"buffer": 0, "byteOffset": off,
                                              "byteLength": 4 * len(floats)})
    acc = {"bufferView": len(doc["bufferViews"]) - 1, "componentType": 5126, "count": count,
           "type": ty}
    if minmax:
        acc["min"], acc["max"] = [min(floats)], [max(floats)]
    doc.setdefault("accessors", []).append(acc)
    return len(doc["accessors"]) - 1


def append_clips(glb, objects, scene_fps):
    """Appends every clip action of `objects` (module docs) to the GLB at
    `glb` as glTF animations in clip time, with the clip's extras. Returns
    the clip names written."""
    doc, binary = tools.read_glb(glb)
    index = {n.get("name"): i for i, n in enumerate(doc.get("nodes", []))}
    anims = {}
    for o in objects:
        g = index.get(o.name)
        if g is None:
            continue
        for act, slot in clip_actions(o):
            fcs = fcurves_of(act, slot)
            for path, width, ty in (("location", 3, "VEC3"), ("rotation_quaternion", 4, "VEC4")):
                got = sample_path(fcs, path, width)
                if got is None:
                    continue
                name = act["parkan_clip"].get("name", act.name)
                anims.setdefault(name, (act, []))[1].append((g, path, got))
    for name, (act, chans) in sorted(anims.items()):
        info = dict(act["parkan_clip"])
        ex = {"clip": info, "name": name}
        ct = act.get("parkan_clip_time")
        if ct is not None:
            ex.update(start=float(ct[0]), end=float(ct[1]), fps=float(ct[2]))
        anim = {"name": name, "channels": [], "samplers": [], "extras": {"msh": ex}}
        for g, path, (frames, vals) in chans:
            times = [clip_seconds(f, scene_fps) for f in frames]
            inp = _accessor(doc, binary, times, "SCALAR", len(times), minmax=True)
            out = _accessor(doc, binary, [c for v in vals for c in v],
                            "VEC4" if path == "rotation_quaternion" else "VEC3", len(vals))
            anim["samplers"].append({"input": inp, "output": out, "interpolation": "LINEAR"})
            anim["channels"].append({"sampler": len(anim["samplers"]) - 1, "target": {
                "node": g, "path": "rotation" if path == "rotation_quaternion" else "translation"}})
        doc.setdefault("animations", []).append(anim)
    if anims:
        if not doc.get("buffers"):
            doc["buffers"] = [{"byteLength": 0}]
        doc["buffers"][0]["byteLength"] = len(binary) + (-len(binary) % 4)
        tools.write_glb(glb, doc, binary)
    return sorted(anims)


