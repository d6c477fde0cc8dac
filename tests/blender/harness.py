"""Steps every add-on test script shares (tests/blender/*_test.py).

A script run as ``blender -b --factory-startup --python SCRIPT -- ARGS`` or
as ``PYTHON SCRIPT -- ARGS`` with PyPI's ``bpy`` (tests/common/mod.rs,
``blender_script``) puts this folder on ``sys.path`` and imports it:

    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import harness

then reads its arguments with :func:`args`, keeps its findings in a report
dict whose ``errors`` list names every failed check (:func:`checker`),
installs the packaged add-on with :func:`install_addon`, and ends with
:func:`run`, which prints the one line ``TAG {json}`` the Rust test reads
(``common::blender_report``), with any exception's traceback in ``errors``.
"""

import json
import sys
import traceback

import bpy


def args():
    """The script's own arguments: everything after ``--``."""
    return sys.argv[sys.argv.index("--") + 1:] if "--" in sys.argv else []


def checker(out):
    """A ``check(cond, what)`` that appends ``what`` to ``out["errors"]``
    when ``cond`` is false, and returns ``cond``."""
    def check(cond, what):
        if not cond:
            out["errors"].append(what)
        return cond
    return check


def install_addon(zip_path, out):
    """Empties the scene (factory settings), then installs and enables the
    add-on zip ``zip_path`` in the user scripts folder the test chose
    (``BLENDER_USER_SCRIPTS``); a step that does not finish is an error in
    ``out``. Returns whether both finished."""
    bpy.ops.wm.read_factory_settings(use_empty=True)
    check = checker(out)
    ok = check("FINISHED" in bpy.ops.preferences.addon_install(filepath=zip_path, overwrite=True),
               "add-on install did not finish")
    return check("FINISHED" in bpy.ops.preferences.addon_enable(module="io_scene_parkan"),
                 "add-on enable did not finish") and ok


def run(tag, main, out):
    """Runs ``main()``; an exception's traceback goes into ``out["errors"]``;
    then prints ``TAG {json of out}``."""
    try:
        main()
    except Exception:  # noqa: BLE001 (reported, the test fails on it)
        out.setdefault("errors", []).append(traceback.format_exc())
    print(tag + " " + json.dumps(out), flush=True)
