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
