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

