"""Edits Blender's glTF exporter would drop before gltf2msh sees them
(issue 24: every edit reaches the game, or Blender says why).

Blender's glTF exporter re-evaluates each animated object's action while it
exports, so an animated object moved, turned or scaled without a key loses
that change: the glTF shows the keyed pose and gltf2msh cannot tell. The
export refuses such an object by name instead of writing the model without
the edit.
"""

# Transform properties an action can drive, and their Blender names.
CHANNELS = {"location": "moved", "rotation_quaternion": "turned", "rotation_euler": "turned",
            "rotation_axis_angle": "turned", "scale": "scaled"}


def unkeyed_changes(objects, frame, tol=1e-4):
    """[(object name, [what])] for animated objects whose transform differs
    from what their action gives at `frame` (moved / turned / scaled
    without a key)."""
    out = []
    for o in objects:
        ad = o.animation_data
        if ad is None or ad.action is None:
            continue
        what = set()
        for fc in ad.action.fcurves:
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
