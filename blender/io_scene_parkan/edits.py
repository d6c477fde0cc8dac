"""Edits Blender's glTF exporter would drop before gltf2msh sees them
(issue 24: every edit reaches the game, or Blender says why).

Blender's glTF exporter re-evaluates each animated object's action while it
exports, so an animated object moved, turned or scaled without a key loses
that change: the glTF shows the keyed pose and gltf2msh cannot tell. The
export keeps each such object's transform as it was before the export
(`current_transforms`) and writes it back into the exported glTF as the
node's static transform (`patch_glb`); gltf2msh then sees a static
transform that lies on the node's channels at no frame and applies the
difference at the scene's current frame (`frame_current`) to every key.
When that cannot be done, the export is refused naming the object
(`refusal`).
"""

import struct

from . import compat
from . import tools

# Transform properties an action can drive, and their Blender names.
CHANNELS = {"location": "moved", "rotation_quaternion": "turned", "rotation_euler": "turned",
            "rotation_axis_angle": "turned", "scale": "scaled"}


def action_fcurves(o):
    """The F-curves of an object's active action for the object
    (`compat.fcurves` with the object's action slot)."""
    ad = o.animation_data
    act = ad.action if ad is not None else None
    return compat.fcurves(act, compat.action_slot(ad)) if act is not None else []


def unkeyed_changes(objects, frame, tol=1e-4):
    """[(object name, [what])] for animated objects whose transform differs
    from what their action gives at `frame` (moved / turned / scaled
    without a key)."""
    out = []
    for o in objects:
        what = set()
        for fc in action_fcurves(o):
            if fc.data_path not in CHANNELS or fc.mute:
                continue
            try:
                cur = getattr(o, fc.data_path)[fc.array_index]
            except (AttributeError, IndexError):
                continue
            if abs(fc.evaluate(frame) - cur) > tol * max(1.0, abs(cur)):
                what.add(CHANNELS[fc.data_path])
        if what:
            out.append((o.name, sorted(what)))
    return out


def refusal(changes, frame):
    """The export's error message for `unkeyed_changes`, naming each object."""
    parts = [f"{name} {' and '.join(what)} without a key" for name, what in changes]
    return (f"{'; '.join(parts)} (at frame {frame}): Blender's glTF export replays the animation "
            "and would drop this; insert a key (I) on the changed frame(s) to write it, or undo it")


def current_transforms(objects, changes):
    """{object name: (translation, rotation (x, y, z, w), scale)} in glTF
    axes (Blender's +Y-up export: (x, y, z) -> (x, z, -y)) of the objects
    named in `changes`, read before the export replays their actions."""
    names = {n for n, _ in changes}
    out = {}
    for o in objects:
        if o.name not in names:
            continue
        # matrix_basis follows the properties at once (matrix_local waits for
        # the depsgraph).
        t, q, s = (o.matrix_parent_inverse @ o.matrix_basis).decompose()
        out[o.name] = ([t.x, t.z, -t.y], [q.x, q.z, -q.y, q.w], [s.x, s.z, s.y])
    return out


def patch_glb(path, transforms):
    """Writes `transforms` (see `current_transforms`) as the static TRS of
    the nodes of the same name in the GLB at `path`. Returns the names not
    found (nothing is written for them)."""
    try:
        doc, binary = tools.read_glb(path)
    except (ValueError, struct.error):
        return sorted(transforms)
    left = set(transforms)
    for node in doc.get("nodes", []):
        name = node.get("name")
        if name in left:
            t, r, s = transforms[name]
            node.pop("matrix", None)
            node["translation"], node["rotation"] = t, r
            if any(abs(x - 1.0) > 1e-6 for x in s):
                node["scale"] = s
            else:
                node.pop("scale", None)
            left.discard(name)
    tools.write_glb(path, doc, binary)
    return sorted(left)


class Held:
    """The transforms of the animated objects moved, turned or scaled
    without a key (`unkeyed_changes` at `frame`), held across an export.

    Blender's glTF exporter replays every action while it exports, so such
    an object jumps back to its keyed pose: the user's change would vanish
    from the scene (and a second export would find nothing to write).
    `changes` and `kept` are what the export puts into the glTF
    (`patch_glb`); after gltf2msh wrote the edit, `fold` puts the same
    change into the object's keys (the rule gltf2msh applies to the Res8
    keys, object_transforms.rs: translation `+ Δt`, rotation `Δq · q` with
    `Δq = q_now · q(F)⁻¹`; Euler rotation and scale channels `+ Δ` and
    `× ratio` per component), so the scene shows what was written at every
    frame and every later export writes it again; `restore` gives every
    held object the transform the user left (after a failed export too,
    with the keys untouched)."""

    def __init__(self, objects, frame):
        self.frame = frame
        self.changes = unkeyed_changes(objects, frame)
        self.kept = current_transforms(objects, self.changes)
        names = {n for n, _ in self.changes}
        self.saved = [(o, o.location.copy(), o.rotation_quaternion.copy(),
                       o.rotation_euler.copy(), o.scale.copy())
                      for o in objects if o.name in names]
        self.folded = []

    def restore(self):
        """Every held object back to the transform the user left."""
        for o, loc, quat, euler, scale in self.saved:
            o.location, o.rotation_quaternion = loc, quat
            o.rotation_euler, o.scale = euler, scale

    def fold(self, written=None):
        """The held changes into every key of the objects' actions (class
        docs), of the objects gltf2msh wrote: `written` is a set of (part
        or None, Res1 node) from its report (`baked_nodes`, per part for a
        unit), None for every held object. Returns the names of the objects
        whose keys changed."""
        from .scene import msh_props
        for o, loc, quat, euler, scale in self.saved:
            p = msh_props(o)
            part = p.get("part")
            if written is not None and (None if part is None else int(part),
                                        p.get("node")) not in written:
                continue
            fcs = [fc for fc in action_fcurves(o) if fc.data_path in CHANNELS and not fc.mute]
            by_path = {}
            for fc in fcs:
                by_path.setdefault(fc.data_path, {})[fc.array_index] = fc
            changed = False
            for path, comps in by_path.items():
                if path == "rotation_quaternion":
                    changed |= _fold_quaternion(comps, quat, self.frame)
                else:
                    now = {"location": loc, "rotation_euler": euler, "scale": scale}.get(path)
                    if now is not None:
                        changed |= _fold_components(comps, now, self.frame, path == "scale")
            if changed:
                self.folded.append(o.name)
        return list(self.folded)


def _shift_key(k, dy):
    k.co.y += dy
    k.handle_left.y += dy
    k.handle_right.y += dy


def _fold_components(comps, now, frame, ratio, tol=1e-7):
    """Each component's keys `+ (now − value at frame)` (`ratio`: `×
    now / value`, for scale); True when a key moved."""
    changed = False
    for i, fc in comps.items():
        was = fc.evaluate(frame)
        if ratio:
            if abs(was) < 1e-12 or abs(now[i] - was) <= tol * max(1.0, abs(was)):
                continue
            f = now[i] / was
            for k in fc.keyframe_points:
                k.co.y, k.handle_left.y, k.handle_right.y = (
                    k.co.y * f, k.handle_left.y * f, k.handle_right.y * f)
        else:
            d = now[i] - was
            if abs(d) <= tol * max(1.0, abs(now[i])):
                continue
            for k in fc.keyframe_points:
                _shift_key(k, d)
        fc.update()
        changed = True
    return changed


def _fold_quaternion(comps, now, frame, tol=1e-7):
    """Keys of the w, x, y, z curves `comps` turned by `Δq = now · q(F)⁻¹`
    (each key frame's quaternion left-multiplied; a handle moves with its
    key). True when a key moved."""
    from mathutils import Quaternion
    rest = (1.0, 0.0, 0.0, 0.0)

    def at(f):
        return Quaternion([comps[i].evaluate(f) if i in comps else rest[i] for i in range(4)])

    was = at(frame)
    if was.magnitude < 1e-12:
        return False
    dq = now.normalized() @ was.normalized().inverted()
    if all(abs(a - b) <= tol for a, b in zip(dq, rest)):
        return False
    frames = sorted({k.co.x for fc in comps.values() for k in fc.keyframe_points})
    new = {f: dq @ at(f) for f in frames}
    for i, fc in comps.items():
        for k in fc.keyframe_points:
            _shift_key(k, new[k.co.x][i] - k.co.y)
        fc.update()
    return True
