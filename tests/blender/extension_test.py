"""Installs the packaged add-on zip in headless Blender and imports the
committed samples through it (run by tests/blender_extension.rs).

    BLENDER_USER_SCRIPTS=TMP/scripts BLENDER_USER_CONFIG=TMP/config \\
    blender -b --factory-startup --python tests/blender/extension_test.py -- ZIP SAMPLES WORK

Blender 4.2+ installs the zip as an extension (extensions.package_install_files
into the user repository), older ones as a legacy add-on (addon_install).
Python warnings raised while installing and enabling are recorded. Then:
every model of SAMPLES/demo/demo.rlb through File > Import (entry "*"), the
bare SAMPLES/anim_rotor.msh, and the stepped import job (`job.ImportJob`,
what the modal operator runs) over a folder of two archives, cancelled
after the first model. Prints one line `EXTENSION_TEST {json}`.
"""

import json
import os
import shutil
import sys
import traceback
import warnings

import bpy

ZIP, SAMPLES, WORK = [os.path.abspath(a) for a in sys.argv[sys.argv.index("--") + 1:][:3]]
out = {"errors": [], "blender": bpy.app.version_string}


def check(cond, what):
    if not cond:
        out["errors"].append(what)
    return cond


def install():
    """Installs and enables the zip; returns the add-on's module."""
    if bpy.app.version >= (4, 2, 0):
        out["installed_as"] = "extension"
        r = bpy.ops.extensions.package_install_files(
            filepath=ZIP, repo="user_default", enable_on_install=True)
    else:
        out["installed_as"] = "legacy"
        r = bpy.ops.preferences.addon_install(filepath=ZIP, overwrite=True)
        check("FINISHED" in r, f"addon_install: {r}")
        r = bpy.ops.preferences.addon_enable(module="io_scene_parkan")
    check("FINISHED" in r, f"install/enable: {r}")
    names = [n for n in sys.modules if n.endswith("io_scene_parkan")]
    out["module"] = names[0] if names else None
    return sys.modules[names[0]] if names else None


def tree(coll):
    return {c.name: {"objects": len(c.objects), "children": tree(c),
                     "msh": str(c["msh"]["source"]) if "msh" in c.keys() else None}
            for c in coll.children}


def main():
    os.makedirs(WORK, exist_ok=True)
    bpy.ops.wm.read_factory_settings(use_empty=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        addon = install()
    out["enable_warnings"] = [f"{w.category.__name__}: {w.message}" for w in caught]
    if not check(addon is not None, "add-on module not loaded"):
        return
    out["addon_file"] = addon.__file__
    out["msh2gltf"] = addon.binary(bpy.context, "msh2gltf")

    # Every model of an archive (the operator, as a script calls it: synchronous).
    r = bpy.ops.import_scene.parkan_msh(filepath=os.path.join(SAMPLES, "demo", "demo.rlb"),
                                        entry_name="*")
    out["archive_result"] = list(r)
    root = bpy.context.scene.collection
    out["archive_tree"] = tree(root)
    out["materials_with_image"] = sorted(
        m.name for m in bpy.data.materials
        if m.node_tree and any(n.type == "TEX_IMAGE" and n.image for n in m.node_tree.nodes))

    # A bare animated model.
    r = bpy.ops.import_scene.parkan_msh(filepath=os.path.join(SAMPLES, "anim_rotor.msh"))
    out["model_result"] = list(r)
    out["actions"] = len(bpy.data.actions)
    out["frame_end"] = bpy.context.scene.frame_end

    # The stepped job over a folder of two archives, cancelled after one model.
    folder = os.path.join(WORK, "game")
    os.makedirs(folder, exist_ok=True)
    for src, dst in (("demo.rlb", "a.rlb"), ("demo.rlb", "b.rlb"), ("Material.lib", "Material.lib"),
                     ("Textures.lib", "Textures.lib")):
        shutil.copy(os.path.join(SAMPLES, "demo", src), os.path.join(folder, dst))
    job_mod = sys.modules[out["module"] + ".job"]
    before = len(bpy.data.objects)
    m2g = out["msh2gltf"]
    settings = {"fps": 24.0, "set_scene_fps": True, "lightmaps": True, "textures": True,
                "state": 0, "lod": 0, "all_cells": False}
    job = job_mod.ImportJob(bpy.context, m2g, folder, "folder", 2, ["--fps", "24.0", "--force"],
                            settings)
    while job.n_models < 1 and job.step(bpy.context, block=True):
        pass
    job.cancel()
    out["job_more_after_cancel"] = job.step(bpy.context)
    job.settle(bpy.context)
    out["job_reports"] = [list(x) for x in job.reports()]
    tmp = job.tmp
    job.cleanup()
    out["job_tmp_removed"] = not os.path.exists(tmp)
    out["job_new_objects"] = len(bpy.data.objects) - before
    out["job_models"] = job.n_models

    # Cancelled while the converter runs: nothing imported, the converter stopped.
    job = job_mod.ImportJob(bpy.context, m2g, folder, "folder", 2, ["--fps", "24.0", "--force"],
                            settings)
    job.step(bpy.context)  # starts msh2gltf
    job.cancel()
    out["early_cancel_exit"] = job.proc.poll()
    out["early_cancel_models"] = job.n_models
    job.cleanup()


try:
    main()
except Exception:
    out["errors"].append(traceback.format_exc())
print("EXTENSION_TEST " + json.dumps(out))
sys.stdout.flush()
