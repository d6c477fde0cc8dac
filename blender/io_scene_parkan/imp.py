"""File > Import > Parkan model: what the import operator (ops_import) runs:
the archive listing the file browser shows, the converter's arguments and
the ImportJob (job.py) for the chosen file, entry, archive or folder."""

import os

import bpy

from . import tools
from .com import binary, game_dir
from .job import ImportJob


def count_models(m2g, folder):
    """Models under a game folder, for the progress bar (archives listed, bare .msh counted)."""
    n = 0
    for d, _dirs, files in os.walk(folder):
        for f in files:
            low = f.lower()
            if low.endswith(".msh"):
                n += 1
            elif low.endswith(".rlb"):
                try:
                    n += len(tools.list_models(m2g, os.path.join(d, f))["models"])
                except tools.ToolError:
                    pass
    return n


# ---------------------------------------------------------------- import


_entry_cache = {}  # path -> (mtime, listing or error text, enum items)


def browser_path(op, context):
    """The file the file browser has selected (or the operator's filepath)."""
    space = getattr(context, "space_data", None) if context else None
    params = getattr(space, "params", None) if space is not None and space.type == "FILE_BROWSER" else None
    if params is not None:
        d, f = params.directory, params.filename
        if isinstance(d, bytes):
            d = d.decode("utf-8", "surrogateescape")
        if f:
            return os.path.join(d, f)
    return bpy.path.abspath(op.filepath) if op.filepath else ""


def listing(context, path):
    """(listing dict or None, error text, enum items) for a model/archive path, cached by mtime."""
    try:
        mtime = os.stat(path).st_mtime
    except OSError:
        return None, "", [("NONE", "(pick a .msh or .rlb file)", "")]
    hit = _entry_cache.get(path)
    if hit and hit[0] == mtime:
        return hit[1], hit[2], hit[3]
    lst, err = None, ""
    try:
        lst = tools.list_models(binary(context, "msh2gltf"), path)
    except tools.ToolError as e:
        err = str(e)
    if lst is None:
        items = [("NONE", "(no models)", err)]
    elif lst["kind"] in ("model", "terrain"):
        items = [("FILE", lst["models"][0]["name"], "The model file (or map)")]
    else:
        items = [(f"E{m['index']}", m["name"], f"{m['bytes']} bytes") for m in lst["models"]]
        items.append(("ALL", f"All {len(lst['models'])} models", "Every model of the archive"))
    _entry_cache[path] = (mtime, lst, err, items)
    return lst, err, items


def entry_items(self, context):
    return listing(context, browser_path(self, context))[2]


def converter_args(op, context, m2g):
    args = ["--fps", repr(float(op.fps)), "--force"]
    if tools.supports(m2g, "--state"):
        args += ["--state", str(op.state), "--lod", str(op.lod)]
    else:  # older msh2gltf: --lod is the state, --group the level
        args += ["--lod", str(op.state), "--group", str(op.lod)]
    if op.all_cells:
        args.append("--all-cells")
    if not op.textures:
        args.append("--no-textures")
    if op.tolerant:
        args.append("--tolerant")
    gd = game_dir(context, op.game_dir)
    if gd:
        args += ["--game-dir", gd]
    return args


def make_job(op, context):
    """The ImportJob for the chosen file, entry, archive or folder."""
    m2g = binary(context, "msh2gltf")
    path = bpy.path.abspath(op.filepath)
    if op.whole_folder or os.path.isdir(path):
        src = path if os.path.isdir(path) else os.path.dirname(path)
        what, total = "folder", count_models(m2g, src)
    else:
        src, what, total = pick(op, m2g, path)
    settings = {"fps": float(op.fps), "set_scene_fps": op.set_scene_fps,
                "lightmaps": op.lightmaps, "textures": op.textures, "state": op.state,
                "lod": op.lod, "all_cells": op.all_cells, "layout": op.grid}
    return ImportJob(context, m2g, src, what, total, converter_args(op, context, m2g), settings)


def pick(op, m2g, path):
    """(source, what, total) for a file: the model, the entry picked, or the archive."""
    if not os.path.isfile(path):
        raise tools.ToolError(f"{path}: no such file")
    lst = tools.list_models(m2g, path)
    names = [m["name"] for m in lst["models"]]
    if lst["kind"] in ("model", "terrain"):
        return path, "model", 1
    pick = op.entry_name.strip()
    if not pick:
        ident = op.entry
        if ident == "ALL":
            pick = "*"
        elif ident.startswith("E"):
            pick = next((m["name"] for m in lst["models"] if f"E{m['index']}" == ident), "")
        if not pick:
            pick = names[0] if names else ""
    if pick == "*":
        return path, "archive", len(names)
    hit = [n for n in names if n.lower() == pick.lower()]
    if not hit:
        raise tools.ToolError(
            f"{os.path.basename(path)} has no model {pick!r} (models: {', '.join(names[:20])})")
    return f"{path}:{hit[0]}", "model", 1
