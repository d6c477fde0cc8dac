"""The Info line of each export: what was written and where, from
gltf2msh's `--report` JSON and the files the add-on asked for (issue 39
item 3).

One rule for every export (`say`): the line names each file written (the
game's own archive after Install into the game, never the file chosen in
the browser that Install does not use), what changed in it (or
"unchanged"), and counts exactly the warnings it lists, each as its own
WARNING line (gltf2msh's `import.warnings`, its libraries' warnings, and
the add-on's own). Nothing here imports bpy: the texts are tested on their
own, and `history` keeps the last reports for scripts and tests.
"""

import os

from . import tools

# The last reports made through `say` ((level, text), oldest first; at most
# HISTORY): what a script or a test reads back, since Blender keeps an
# operator's reports where Python cannot see them.
HISTORY = 200
history = []


def say(op, level, text):
    """`op.report({level}, text)`, remembered in `history`."""
    op.report({level}, text)
    history.append((level, text))
    del history[:-HISTORY]


def finish(op, context, info, warnings):
    """The Info line `info` and then each warning as its own line (and the
    popup listing them: `tools.RunsTools.report_warnings`)."""
    say(op, "INFO", info)
    for w in warnings:
        history.append(("WARNING", w))
    del history[:-HISTORY]
    op.report_warnings(context, warnings)


def warning_count(warnings):
    return f"{len(warnings)} warning(s)"


def all_warnings(r):
    """Every warning text of a gltf2msh report: `tools.report_warnings`
    and the library edit's (`import.libraries.warnings`: a material shared
    with other models, a texture approximated), in order, each once."""
    out = list(tools.report_warnings(r))
    libs = (r.get("import") or {}).get("libraries") or {}
    for w in libs.get("warnings", []) or []:
        if str(w) not in out:
            out.append(str(w))
    return out


def _library_text(libs):
    parts = []
    if libs.get("materials"):
        parts.append("materials " + ", ".join(sorted(libs["materials"])))
    if libs.get("textures"):
        parts.append("textures " + ", ".join(sorted(libs["textures"])))
    if libs.get("new_textures"):
        parts.append("new textures " + ", ".join(libs["new_textures"]))
    if libs.get("shared"):
        parts.append("shared with " + "; ".join(f"{k}: {len(v)} other model(s)"
                                                for k, v in sorted(libs["shared"].items())))
    return "; ".join(parts)


def model_edit(r, target, installed, entry=""):
    """(Info line, warnings) of a model or map edit (`gltf2msh --base`).
    `target`: the file gltf2msh wrote (the game's archive when
    `installed`), `entry` the archive entry replaced."""
    imp = r.get("import") or {}
    libs = imp.get("libraries") or {}
    warnings = all_warnings(r)
    edited_libs = libs.get("materials") or libs.get("textures") or libs.get("new_textures")
    if "repainted_faces" in imp:  # a map (terrain::import report)
        what = map_what(imp)
    else:
        what = (f"{imp.get('moved_vertices', 0)} moved / {imp.get('new_vertices', 0)} new "
                f"vertices, tracks changed {imp.get('changed_tracks', [])}")
        if imp.get("baked_nodes"):
            what += f", object transforms written {imp['baked_nodes']}"
        if imp.get("control_points"):
            what += "; control points: " + "; ".join(imp["control_points"])
    if imp.get("unchanged") and not edited_libs:
        what = "unchanged"
    files = [target]
    land_map = (imp.get("land_map") or {}).get("written")
    if land_map:  # the map's Land.map, its areals on the edited ground
        files.append(str(land_map))
    if imp.get("control_points") and target.lower().endswith(".msh"):
        files.append(os.path.splitext(target)[0] + ".cpt")
    lib_files = [str(p) for p in libs.get("written") or []]
    where = (f"Installed into {', '.join(files)}" + (f" (entry {entry} replaced in place)" if entry else "")
             if installed else f"Wrote {', '.join(files)}")
    if lib_files:
        where += f" and {', '.join(lib_files)}"
    lt = _library_text(libs)
    return f"{where} ({what}{'; ' + lt if lt else ''}; {warning_count(warnings)})", warnings


def map_what(imp):
    """What a map edit changed (terrain::import report and its land_map
    object): moved vertices, "N faces repainted", the patch border
    vertices split for two-material faces (terrain-notes §1.7), alpha and
    UV edits, and the Land.map areal vertices that follow the ground."""
    what = (f"{imp.get('moved_vertices', 0)} moved vertices, "
            f"{imp.get('repainted_faces', 0)} faces repainted")
    if imp.get("split_vertices"):
        what += (f", {imp['split_vertices']} patch border vertices split "
                 f"({imp.get('patch_copies', 0)} copies, {imp.get('patch_alpha_set', 0)} alpha set)")
    what += f", {imp.get('alpha_changed', 0)} alpha and {imp.get('uv_changed', 0)} UV edits"
    lm = imp.get("land_map") or {}
    if lm.get("written"):
        what += (f", Land.map: {lm.get('moved_vertices', 0)} areal vertices of "
                 f"{lm.get('changed_areals', 0)} areals follow the ground")
    return what


def kept_text(folded, changes):
    """The clause saying which objects' keys now hold an unkeyed change:
    `folded` the names `edits.Held.fold` returned, `changes` the held
    [(name, [moved / turned / scaled])]; empty when none."""
    if not folded:
        return ""
    what = dict(changes)
    done = [f"{n} {' and '.join(what.get(n) or ['changed'])}" for n in folded]
    return (f"; unkeyed: {', '.join(done)}, now in the keys in Blender too "
            "(every frame shows what was written)")


def unit_edit(r, unit, installed):
    """(Info line, warnings) of a unit edit: each part written with its
    ARCHIVE:ENTRY and the archive files written (in place when
    `installed`), the parts unchanged."""
    imp = r.get("import") or {}
    warnings = all_warnings(r)
    parts = imp.get("parts") or []
    done = [f"part {p.get('part')} {p.get('record')} -> {p.get('archive')}:{p.get('entry')}"
            for p in parts if p.get("written")]
    same = [str(p.get("record")) for p in parts if not p.get("written") and p.get("unchanged")]
    kept = [str(p.get("record")) for p in parts if not p.get("written") and not p.get("unchanged")]
    if not done:
        if imp.get("unchanged"):
            text = f"unit {unit}: unchanged ({len(parts)} part(s)), nothing written"
        else:
            text = f"unit {unit}: nothing written ({len(parts)} part(s)): see the warnings"
        return f"{text}; {warning_count(warnings)}", warnings
    files = ", ".join(str(p) for p in imp.get("written") or [])
    verb = "Installed into" if installed else "Wrote"
    text = f"{verb} {files} (unit {unit}: parts written: " + ", ".join(done)
    if same:
        text += f"; unchanged: {', '.join(same)}"
    if kept:
        text += f"; not written: {', '.join(kept)}"
    return f"{text}; {warning_count(warnings)})", warnings


def mission_edit(r, out, base, extra_warnings, installed=False):
    """(Info line, warnings) of a mission edit: the data.tma written and
    what changed, each object counted once per kind of change (gltf2msh
    counts: moved = originals moved, turned or rescaled; edited = other
    fields; added = copies; deleted), plus the add-on's own warnings."""
    imp = r.get("import") or {}
    warnings = all_warnings(r) + list(extra_warnings)
    if imp.get("unchanged") and not warnings:
        what = "unchanged"
    else:
        parts = [(imp.get("moved", 0), "moved, turned or rescaled"),
                 (imp.get("edited", 0), "with other fields edited"),
                 (imp.get("deleted", 0), "deleted"), (imp.get("added", 0), "added as copies")]
        what = ", ".join(f"{n} {t}" for n, t in parts if n) or "no object changed"
        what += " (objects)"
        if imp.get("layers"):
            what += f"; {imp['layers']} lodes, clan bases, zones and routes moved"
    verb = "Installed into" if installed else "Wrote"
    return (f"{verb} {out} (mission {os.path.basename(base)}: {what}; "
            f"{warning_count(warnings)}){install_clause(r)}"), warnings


def base_export(op, context, r, wrote, held):
    """The report of File › Export › Parkan model in mode "Edit of the
    imported model": `wrote` is ("model", target, entry replaced in place
    or "") or ("unit", unit file name, ""); `held` the unkeyed changes
    (`edits.Held`), folded into the keys when gltf2msh wrote them."""
    kind, target, entry = wrote or ("model", "?", "")
    installed = bool(getattr(op, "install", False))
    imp = r.get("import") or {}
    if kind == "unit" or isinstance(imp.get("parts"), list):
        info, warnings = unit_edit(r, target, installed)
        written = {(p.get("part"), n) for p in imp.get("parts") or [] if p.get("written")
                   for n in (p.get("import") or {}).get("baked_nodes") or []}
    else:
        info, warnings = model_edit(r, target, installed, entry)
        written = {(None, n) for n in imp.get("baked_nodes") or []}
    if held is not None and held.saved:
        info += kept_text(held.fold(written), held.changes)
    info += install_clause(r)
    finish(op, context, info, warnings)


def install_clause(r):
    """"; " and what an install kept (install.install_text), or ""."""
    from . import install
    text = install.install_text(r)
    return f"; {text}" if text else ""
