"""Every difference between the Blender versions the add-on supports
(3.4 .. 5.x) in one place: the rest of the add-on calls these and never
reads `bpy.app.version` itself.
"""

import bpy


def numpy_shim():
    """Blender 3.4's glTF importer uses np.bool, which numpy 1.24 removed.
    Only for Blender < 3.6, and without touching `numpy.bool` first: in numpy
    1.24..1.26 even `hasattr(numpy, "bool")` prints a FutureWarning."""
    if bpy.app.version >= (3, 6, 0):
        return
    try:
        import numpy
    except ImportError:
        return
    if "bool" not in vars(numpy):  # numpy 2.x defines it again
        numpy.bool = bool



def layer_root(view_layer):
    """`view_layer`'s root LayerCollection (the tree `scene.layer_collection`
    searches). Blender 5.3 builds the layer tree of a new scene (the
    import's staging scene) lazily: `view_layer.layer_collection` is None
    until something syncs it, and reading `active_layer_collection` does
    (cheaply; `view_layer.update()` would evaluate the depsgraph too).
    Earlier versions have it at once."""
    root = view_layer.layer_collection
    if root is None:
        view_layer.active_layer_collection  # noqa: B018 (syncs the layer tree)
        root = view_layer.layer_collection
    if root is None:
        view_layer.update()
        root = view_layer.layer_collection
    return root


def action_slot(holder):
    """The action slot of `holder` (an object's AnimData or an NLA strip):
    Blender 4.4+'s layered actions keep one channel bag per slot; None
    before 4.4 (one action per object, no slots)."""
    return getattr(holder, "action_slot", None)


def fcurves(act, slot=None):
    """The F-curves of `act` for the object `slot` stands for.

    Up to Blender 4.3 an action is one object's: `Action.fcurves`. From
    4.4 actions are layered: the glTF importer makes one action per glTF
    animation with a slot per object, and each slot's F-curves are in its
    channel bag. 4.4 and 4.5 still have `Action.fcurves`, but it is the
    first slot's channel bag whatever the slot (every object would get the
    first object's curves); 5.0 removed it. So: the slot's channel bag when
    the action has slots and a slot is given, else `Action.fcurves`."""
    if act is None:
        return []
    if slot is not None and getattr(act, "slots", None) is not None:
        try:
            from bpy_extras import anim_utils
            bag = anim_utils.action_get_channelbag_for_slot(act, slot)
            return list(bag.fcurves) if bag is not None else []
        except (ImportError, AttributeError):
            pass
        out = []
        for layer in act.layers:
            for strip in layer.strips:
                bag = strip.channelbag(slot)
                if bag is not None:
                    out += list(bag.fcurves)
        return out
    if hasattr(act, "fcurves"):
        return list(act.fcurves)
    return []
