"""The add-on reads text extras within bounds (issue 36 item 11; run by
tests/blender_text_bounds.rs):

    BLENDER_USER_SCRIPTS=TMP/scripts BLENDER_USER_CONFIG=TMP/config \\
    blender -b --factory-startup --python tests/blender/text_bounds_test.py -- ZIP WORK

Blender's glTF importer keeps a nested value it cannot store as an ID
property as its Python text, and the add-on parses it back
(`tools.parse_text`): in a mission export (`missions.fix_text_extras` on the
exported GLB) and for an object's `msh` property (`scene.msh_props`). Each
case below is a crafted value; each must end in a ToolError naming what and
the bound, fast, and an operator (`tools.RunsTools`) must show it as its
ERROR report. Prints one line `TEXT_BOUNDS {json}`: per case the error
text (or what happened instead) and the seconds it took.
"""

import os
import sys
import time

import bpy

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402

ZIP, WORK = (os.path.abspath(a) for a in harness.args()[:2])
out = {"errors": [], "cases": {}}
check = harness.checker(out)


def glb_with(extras_text=None, raw_json=None):
    """A GLB in WORK with one node whose extras.parkan_object is
    `extras_text`, or whose JSON chunk is `raw_json` as given."""
    from io_scene_parkan import tools
    path = os.path.join(WORK, "case.glb")
    if raw_json is not None:
        j = raw_json.encode("utf-8")
        j += b" " * (-len(j) % 4)
        import struct
        body = struct.pack("<II", len(j), 0x4E4F534A) + j
        with open(path, "wb") as f:
            f.write(b"glTF" + struct.pack("<II", 2, 12 + len(body)) + body)
        return path
    doc = {"asset": {"version": "2.0"}, "scene": 0, "scenes": [{"nodes": [0]}],
           "nodes": [{"name": "U1 crafted", "extras": {"parkan_object": extras_text}}]}
    tools.write_glb(path, doc, b"")
    return path


def case(name, fn):
    """Runs `fn`; records the ToolError's text (or what else happened) and
    the seconds it took."""
    from io_scene_parkan import tools
    t0 = time.time()
    try:
        fn()
        what = "no error"
    except tools.ToolError as e:
        what = "ToolError: " + str(e)
    except Exception as e:  # noqa: BLE001 - the case is what the test checks
        what = f"uncaught {type(e).__name__}: {str(e)[:200]}"
    out["cases"][name] = {"result": what[:400], "seconds": round(time.time() - t0, 3)}


def main():
    os.makedirs(WORK, exist_ok=True)
    if not harness.install_addon(ZIP, out):
        return
    from io_scene_parkan import missions, scene as sc, tools

    # A mission export's text extras: a 6 MB literal, a 20 000-digit
    # integer (hex text: Python's literal parser reads it, JSON cannot
    # write it back), and a 20 000-digit number in the GLB's own JSON.
    big = "{'index': 1, 'pad': [" + ", ".join(["1.5"] * 1_500_000) + "]}"
    glb = glb_with(big)
    case("literal_6mb", lambda: missions.fix_text_extras(glb))
    glb2 = os.path.join(WORK, "digits.glb")
    os.replace(glb_with("{'index': 0x" + "f" * 20000 + "}"), glb2)
    case("digits_20000", lambda: missions.fix_text_extras(glb2))
    glb3 = glb_with(raw_json='{"asset":{"version":"2.0"},"nodes":[{"extras":{"x":'
                    + "9" * 20000 + "}}]}")
    case("json_digits_20000", lambda: missions.fix_text_extras(glb3))
    # An object's msh property 100 000 deep.
    o = bpy.data.objects.new("deep", None)
    bpy.context.scene.collection.objects.link(o)
    o["msh"] = "[" * 100_000 + "]" * 100_000
    case("msh_props_deep", lambda: sc.msh_props(o))
    # Text within the bounds still reads back.
    ok = bpy.data.objects.new("ok", None)
    ok["msh"] = "{'node': 3, 'marker': 18446744073709551615, 'pad': [1.5, None]}"
    out["within_bounds"] = sc.msh_props(ok)

    # In Blender: an operator's ERROR report (RunsTools), not a traceback.
    class OBJECT_OT_parkan_text_bounds_probe(tools.RunsTools, bpy.types.Operator):
        bl_idname = "object.parkan_text_bounds_probe"
        bl_label = "probe"

        def run(self, context):
            sc.msh_props(bpy.data.objects["deep"])
            return {"FINISHED"}

    bpy.utils.register_class(OBJECT_OT_parkan_text_bounds_probe)
    try:
        r = bpy.ops.object.parkan_text_bounds_probe()
        out["operator"] = f"finished: {r}"
    except RuntimeError as e:  # background Blender raises the ERROR report
        out["operator"] = str(e)
    out["blender"] = bpy.app.version_string


harness.run("TEXT_BOUNDS", main, out)
