"""Missions (`MISSIONS/<…>/data.tma`, mission-notes §8) in Blender.

File > Import > Parkan mission: `msh2gltf` builds one glTF scene of the
mission (the map, every placed building, unit, tree and rock, the routes,
clans and lodes); Blender's glTF importer loads it; this module sorts the
objects into one child collection per group node (Terrain, Buildings,
Units, Vegetation, Rocks, Routes, Clans, Lodes), gives every placed object
(and its model's pieces) its clan's colour (`Object.color`, shown with the
viewport's Object colour mode), locks the scale of buildings and units (the
game ignores it, §5.3) and remembers the source `data.tma` and the scene
extras (`parkan_mission`, §8.5) on the mission collection. Copies of one
model share its mesh datablocks (one per glTF mesh, §8.2). Under the Clans
collection one collection per clan (named after it, `CLAN_COLL`) holds the
buildings and units it owns, linked there as well as in their kind group:
moving an object into another clan's collection changes its owner on export
(`mark_owners`). Add > Parkan clan (`clans.py`) adds a clan.

File > Export > Parkan mission: Blender's glTF export of the mission
collection, then `fix_text_extras` turns the extras Blender wrote as Python
text back into JSON (see there), then `gltf2msh OUT.glb --base data.tma -o
FILE` writes the edits (moves, turns, rescales of trees and rocks, deleted
objects, Shift+D copies, lodes, clan bases, zones and route points; §8.7)
and its warnings are reported as text (what it did not write: a piece
moved inside a model, a mesh reshaped, the terrain moved or edited, a clan
empty moved vertically), with the add-on's own fingerprint check of the
pieces and meshes for what gltf2msh did not name.
"""

import array
import hashlib
import json
import os
import shutil
import tempfile

import bpy
from bpy.props import BoolProperty, StringProperty
from bpy_extras.io_utils import ExportHelper, ImportHelper

from . import compat
from . import reports
from . import scene as sc
from . import tools
from . import job
from . import layout

# The mission collection's record: {"source": data.tma, "extras": JSON text
# of the scene's extras.parkan_mission}.
RECORD = "parkan_mission"
GROUPS = ("Terrain", "Buildings", "Units", "Vegetation", "Rocks", "Routes", "Clans", "Lodes")
KIND_GROUP = {0: "Buildings", 1: "Units", 2: "Vegetation", 3: "Rocks"}
# Node extras (and the scene's) that msh2gltf writes as JSON objects and
# Blender may hand back as Python text.
EXTRAS_KEYS = ("parkan_object", "parkan_asset", "parkan_mission", "parkan_route", "parkan_clan", "parkan_zone",
               "parkan_lode", "parkan_terrain_scene", "msh")
# One colour per clan index (RGBA); clan -1 and out-of-range: grey.
PALETTE = [(0.25, 0.75, 0.25, 1.0), (0.2, 0.45, 1.0, 1.0), (1.0, 0.25, 0.2, 1.0),
           (1.0, 0.8, 0.15, 1.0), (0.75, 0.3, 1.0, 1.0), (0.1, 0.85, 0.85, 1.0),
           (1.0, 0.55, 0.1, 1.0), (0.95, 0.45, 0.75, 1.0)]
NO_CLAN = (0.6, 0.6, 0.6, 1.0)


def parse_text(v, what="a custom property"):
    """A custom property Blender kept as text as the JSON value it was
    (`tools.parse_text`: bounded, ToolError naming `what` over a bound)."""
    return tools.parse_text(v, what)


def props(o, key="parkan_object"):
    """An object's `key` custom property (its glTF node extras) as plain
    data (a dict), whether Blender kept it as a group or as text; {} when
    absent or unreadable."""
    v = o.get(key)
    if v is None:
        return {}
    v = parse_text(sc.idprop_dict(v), f"object {o.name}: custom property {key}")
    return v if isinstance(v, dict) else {}


def mark_copies(doc, names):
    """gltf2msh takes the node of an object with the shortest name as the
    original and the others as copies (Blender's Shift+D adds `.001`). When
    the names collide with other objects of the .blend (a second mission,
    the same mission twice) the original may be `U13 w_m_trk2.001` and its
    copy `U13 w_m_trk2.002`; `names` ({object index: the name Blender gave
    it on import}) tells which is which: a copy whose name is not longer
    than its original's gets ` copy` appended (in the glTF only). Returns
    how many were renamed."""
    nodes = {}
    for nd in doc.get("nodes", []):
        x = (nd.get("extras") or {}).get("parkan_object")
        if isinstance(x, dict) and isinstance(x.get("index"), int):
            nodes.setdefault(x["index"], []).append(nd)
    n = 0
    for index, group in nodes.items():
        orig = names.get(str(index))
        if len(group) < 2 or orig not in [nd.get("name") for nd in group]:
            continue
        for nd in group:
            name = nd.get("name", "")
            while name != orig and len(name) <= len(orig):
                name += " copy"
            if name != nd.get("name", ""):
                nd["name"] = name
                n += 1
    return n


def fix_text_extras(glb, mission_extras=None, names=None):
    """Rewrites `glb` in place: every node's (and the scene's) extras among
    EXTRAS_KEYS that Blender's exporter wrote as Python text become the JSON
    object they were imported from; with `mission_extras` (a dict), the
    scene's `extras.parkan_mission` is that one (the mission collection's
    copy: a second mission imported into the same Blender scene replaces
    the scene's own). With `names`, copies are told from their originals
    (`mark_copies`). Returns how many values were re-encoded.

    Why here and not in gltf2msh: the text is Python's `repr` of the value
    Blender's importer could not store, and Python's `ast.literal_eval`
    reads it back exactly (big integers, None, float repr round-trips);
    gltf2msh keeps refusing such text from other tools with `mission.node`.
    """
    doc, binary = tools.read_glb(glb)
    n = 0
    holders = list(doc.get("nodes", []))
    scenes = doc.get("scenes", [])
    holders += scenes
    for h in holders:
        ex = h.get("extras")
        if not isinstance(ex, dict):
            continue
        for k in EXTRAS_KEYS:
            v = ex.get(k)
            if isinstance(v, str):
                p = parse_text(v, f"{os.path.basename(glb)}: {h.get('name', 'the scene')!r} extras {k}")
                if isinstance(p, (dict, list)):
                    ex[k] = p
                    n += 1
    if names:
        mark_copies(doc, names)
    if mission_extras is not None and scenes:
        s = scenes[doc.get("scene", 0)]
        ex = s.get("extras") if isinstance(s.get("extras"), dict) else {}
        ex["parkan_mission"] = mission_extras
        s["extras"] = ex
    tools.write_glb(glb, doc, binary)
    return n


def descendants(o):
    out, stack = [], [o]
    while stack:
        x = stack.pop()
        out.append(x)
        stack.extend(x.children)
    return out


def clan_colour(clan):
    return PALETTE[clan % len(PALETTE)] if isinstance(clan, int) and clan >= 0 else NO_CLAN


def colour_by_clan(objects):
    """Each placed object and its model's pieces get its clan's colour
    (`Object.color`); clan empties too. Returns {clan: objects placed}."""
    owned = {}
    for o in objects:
        x = props(o)
        if x:
            clan = x.get("clan", -1)
            owned[clan] = owned.get(clan, 0) + 1
            for d in descendants(o):
                d.color = clan_colour(clan)
            if x.get("kind") in (0, 1):
                o.lock_scale = (True, True, True)
        c = props(o, "parkan_clan")
        if c:
            o.color = clan_colour(c.get("index", -1))
    return owned


def show_object_colours(context):
    """Workbench (render and every 3D view) shows `Object.color`."""
    try:
        context.scene.display.shading.color_type = "OBJECT"
    except (AttributeError, TypeError):
        pass
    for screen in bpy.data.screens:
        for area in screen.areas:
            for space in area.spaces:
                if space.type == "VIEW_3D":
                    space.shading.color_type = "OBJECT"


def sort_into_groups(objects, coll):
    """Moves each imported object into the child collection of the group
    node it sits under (`Terrain`, `Buildings`, …); the root and anything
    outside a group stay in `coll`. Returns {group: collection}."""
    colls = {}
    for o in objects:
        top = o
        while top.parent is not None and top.parent.parent is not None:
            top = top.parent
        group = top.name.rsplit(".", 1)[0] if top.parent is not None else None
        if group not in GROUPS:
            sc.move_to_collection([o], coll)
            continue
        if group not in colls:
            colls[group] = sc.new_collection(group, coll)
            colls[group]["parkan_group"] = group
        sc.move_to_collection([o], colls[group])
    return colls


# A clan collection's custom property: the clan's name (mission-notes §6).
# Under the mission's Clans collection one child per clan, named after it;
# every building and unit it owns is linked into it as well as into its
# kind group. Moving an object into another clan's collection makes that
# clan its owner on export (`parkan_owner`, the `clan` word and `ClanID`
# together: gltf2msh, mission::owners).
CLAN_COLL = "parkan_clan_collection"
OWNER = "parkan_owner"


def clans_parent(coll, groups=None):
    """The mission's `Clans` group collection (made when missing)."""
    if groups and "Clans" in groups:
        return groups["Clans"]
    for c in coll.children:
        if c.get("parkan_group") == "Clans":
            return c
    c = sc.new_collection("Clans", coll)
    c["parkan_group"] = "Clans"
    return c


def clan_collections(coll):
    """{clan collection: the clan's name} of the mission collection `coll`."""
    return {c: c[CLAN_COLL] for c in coll.children_recursive
            if isinstance(c.get(CLAN_COLL), str)}


def new_clan_collection(parent, name):
    """A clan collection for the clan `name` under `parent`."""
    c = sc.new_collection(name, parent)
    c[CLAN_COLL] = name
    return c


def make_clan_collections(coll, objs, mission_ex, groups):
    """One clan collection per clan of the mission (import), holding the
    buildings and units it owns (kinds 0 and 1, by their `clan` word).
    Returns how many objects were linked."""
    clans = mission_ex.get("clans") if isinstance(mission_ex.get("clans"), list) else []
    by_index = {}
    for k, c in enumerate(clans):
        name = c.get("name") if isinstance(c, dict) else None
        by_index[k] = name if isinstance(name, str) and name else f"clan {k}"
    if not by_index:
        return 0
    parent = clans_parent(coll, groups)
    colls = {k: new_clan_collection(parent, n) for k, n in by_index.items()}
    n = 0
    for o in objs:
        x = props(o)
        if x.get("kind") in (0, 1) and x.get("clan") in colls:
            colls[x["clan"]].objects.link(o)
            n += 1
    return n


def mark_owners(coll):
    """Sets `parkan_owner` (the clan's name) on every placed object in a
    clan collection of `coll` (export; Blender's glTF exporter writes it
    into the node's extras). Returns the objects marked, to unmark.
    Raises ToolError naming an object in two clan collections."""
    where = {}
    for c, name in clan_collections(coll).items():
        for o in c.all_objects:
            if props(o) or o.get("parkan_asset") is not None:
                where.setdefault(o.name, (o, []))[1].append(name)
    two = sorted((n, names) for n, (o, names) in where.items() if len(set(names)) > 1)
    if two:
        raise tools.ToolError("; ".join(
            f"{n} is in the collections of clans {', '.join(sorted(set(names)))}: an object has "
            f"one owner; unlink it from all but one clan collection" for n, names in two))
    marked = []
    for o, names in where.values():
        o[OWNER] = names[0]
        marked.append(o)
    return marked


def unmark_owners(marked):
    for o in marked:
        if OWNER in o.keys():
            del o[OWNER]


def mission_path(path):
    """(what to give msh2gltf, the data.tma): a data.tma, or a mission
    folder (or a file inside one) holding data.tma."""
    if os.path.isdir(path):
        folder = path
    elif os.path.basename(path).lower() == "data.tma":
        return path, path
    else:
        folder = os.path.dirname(path)
    for f in os.listdir(folder) if os.path.isdir(folder) else []:
        if f.lower() == "data.tma":
            return os.path.join(folder, f), os.path.join(folder, f)
    raise tools.ToolError(f"{path}: not a mission (no data.tma in {folder})")


# What a mission cannot hold (mission-notes §8.7): data.tma says where the
# game's models stand, not their shapes. The import fingerprints every
# mesh and every piece's place inside its model; the export compares and
# names each edit that gltf2msh would otherwise drop without a word.
SHAPE = "parkan_shape"
PIECE = "parkan_piece"


def mesh_fingerprint(me):
    """A digest of a mesh's vertex positions and faces."""
    co = array.array("f", [0.0]) * (3 * len(me.vertices))
    me.vertices.foreach_get("co", co)
    loops = array.array("i", [0]) * len(me.loops)
    me.loops.foreach_get("vertex_index", loops)
    h = hashlib.blake2b(digest_size=8)
    h.update(co.tobytes())
    h.update(loops.tobytes())
    return h.hexdigest()


def piece_fingerprint(o):
    """A piece's place in its model: its own location, rotation and scale
    (`matrix_basis`, what moving it changes; its parent's move does not),
    to 1e-4."""
    return ",".join(f"{round(x, 4) + 0.0:.4f}" for row in o.matrix_basis for x in row)


def owners(objs):
    """{piece object: the placed object or terrain it belongs to} for every
    object under a placed object or the terrain (not the placed object
    itself: its own transform is gltf2msh's to write)."""
    out = {}
    for o in objs:
        if props(o) or props(o, "parkan_terrain_scene"):
            for d in descendants(o)[1:]:
                out.setdefault(d, o)
    return out


def fingerprint(objs):
    """Stores the fingerprints on the pieces and their meshes (import)."""
    for o in owners(objs):
        o[PIECE] = piece_fingerprint(o)
        if o.type == "MESH" and o.data is not None and SHAPE not in o.data.keys():
            o.data[SHAPE] = mesh_fingerprint(o.data)


def unwritable_edits(coll, said=()):
    """One text per mesh whose shape changed and per piece moved inside
    its model since the import: none reaches data.tma (export). An edit
    gltf2msh's warnings `said` already name (the piece's or the mesh's name
    with "not written": gltf2msh compares the pieces, meshes, terrain,
    zones and routes with the base's scene itself) is not said twice."""
    def known(name):
        return any(name in w and "not written" in w for w in said)

    return [t for name, t in edits(coll) if not known(name)]


def assets_outside(context, coll):
    """One text per game object from the asset library (`parkan_asset`) in
    the scene but outside the mission `coll` being exported: Blender's glTF
    export of `coll` leaves it out, so it is not written (export)."""
    inside = set(coll.all_objects.keys())
    return [f"{o.name}: a game object outside the mission's collection {coll.name}: not written; "
            "move it into one of the mission's clan collections"
            for o in sorted(context.scene.objects, key=lambda o: o.name)
            if o.get("parkan_asset") is not None and o.name not in inside]


def edits(coll):
    """(name, text) of each edit `unwritable_edits` reports."""
    out, meshes = [], {}
    for o, owner in sorted(owners(list(coll.all_objects)).items(), key=lambda p: p[0].name):
        where = "the terrain" if props(owner, "parkan_terrain_scene") else f"placed object {owner.name}"
        if PIECE in o.keys() and o[PIECE] != piece_fingerprint(o):
            out.append((o.name, f"{o.name}: moved, turned or scaled inside {where}: not written "
                                f"(data.tma says where whole objects stand; move {owner.name} "
                                f"itself, or edit its model with File > Import > Parkan model)"))
        me = o.data if o.type == "MESH" else None
        if me is not None and SHAPE in me.keys() and me.name not in meshes:
            meshes[me.name] = (o, where, me[SHAPE] != mesh_fingerprint(me))
    for name, (o, where, edited) in sorted(meshes.items()):
        if edited:
            fix = ("edit the map with File > Import > Parkan model of its Land.msh"
                   if where == "the terrain" else "edit the model with File > Import > Parkan model")
            out.append((name, f"mesh {name} ({o.name}, in {where}): its shape was edited: not "
                              f"written (data.tma holds no geometry; {fix})"))
    return out


def settle(context, coll, objs, tma, mission_ex):
    """A mission's imported objects `objs` (all linked into `coll`, its
    collection) made a mission: sorted into its group collections,
    fingerprinted, coloured by clan, and `coll` given the record the
    export reads (`RECORD`: the data.tma, the scene extras, the names).
    Shared by File › Import › Parkan mission and the whole-folder import
    (job.py). Returns (groups, placed objects, clans coloured, {group:
    placed objects})."""
    groups = sort_into_groups(objs, coll)
    make_clan_collections(coll, objs, mission_ex, groups)
    fingerprint(objs)
    # The name Blender gave each placed object: tells an original from
    # its Shift+D copies on export (mark_copies).
    names = {str(props(o).get("index")): o.name for o in objs if props(o)}
    coll[RECORD] = {"source": tma, "extras": json.dumps(mission_ex), "names": json.dumps(names)}
    owned = colour_by_clan(objs)
    show_object_colours(context)
    placed = [o for o in objs if props(o)]
    by_kind = {}
    for o in placed:
        g = KIND_GROUP.get(props(o).get("kind"), "?")
        by_kind[g] = by_kind.get(g, 0) + 1
    return groups, placed, owned, by_kind


class IMPORT_SCENE_OT_parkan_mission(tools.RunsTools, bpy.types.Operator, ImportHelper):
    """Import a Parkan: Iron Strategy mission (MISSIONS/<...>/data.tma or its folder): the map
    with every placed building, unit, tree and rock, the routes, clans and lodes"""
    bl_idname = "import_scene.parkan_mission"
    bl_label = "Import Parkan mission"
    bl_options = {"REGISTER", "UNDO"}

    filename_ext = ".tma"
    filter_glob: StringProperty(default="*.tma;*.TMA", options={"HIDDEN"})
    textures: BoolProperty(name="Textures", description="Load textures", default=True)

    def run(self, context):
        from . import binary
        m2g = binary(context, "msh2gltf")
        src, tma = mission_path(os.path.abspath(bpy.path.abspath(self.filepath)))
        tmp = tempfile.mkdtemp(prefix="parkan_mission_")
        progress = job.Progress(context, 2, "mission import")
        try:
            glb = os.path.join(tmp, "mission.glb")
            cmd = [m2g, src, glb] + ([] if self.textures else ["--no-textures"])
            progress.step(0, text=f"msh2gltf {os.path.basename(os.path.dirname(tma))}")
            code, err = tools.run(cmd, progress.line)
            if not os.path.isfile(glb):
                raise tools.ToolError(tools.last_error(err) or f"msh2gltf exited with {code}")
            warned = [l.strip() for l in err.splitlines() if "warning" in l.lower()]
            progress.step(text="Blender's glTF import")
            res = self.load(context, tma, glb, len(warned))
            progress.step(text="done")
            # Each warning's text in the report (and a popup), not a count.
            self.report_warnings(context, warned)
            return res
        finally:
            progress.end()
            shutil.rmtree(tmp, ignore_errors=True)

    def load(self, context, tma, glb, warned):
        j = tools.gltf_json(glb)
        scene = context.scene
        s = j.get("scenes", [{}])[j.get("scene", 0)]
        mission_ex = (s.get("extras") or {}).get("parkan_mission") or {}
        had = scene.get("parkan_mission")
        top = context.view_layer.active_layer_collection.collection
        name = os.path.basename(os.path.dirname(tma)) or "mission"
        coll = sc.new_collection(f"Mission {name}", top)
        before = set(bpy.data.objects)
        meshes_before = set(bpy.data.meshes)
        compat.gltf_import(glb)
        objs = [o for o in bpy.data.objects if o not in before]
        # The scene extras live on the mission collection (a second mission
        # would replace the scene's).
        if had is None and "parkan_mission" in scene.keys():
            del scene["parkan_mission"]
        elif had is not None:
            scene["parkan_mission"] = had
        groups, placed, owned, by_kind = settle(context, coll, objs, tma, mission_ex)
        meshes = len(set(bpy.data.meshes) - meshes_before)
        mesh_objs = sum(1 for o in objs if o.type == "MESH")
        kinds = ", ".join(f"{by_kind[g]} {g.lower()}" for g in GROUPS if g in by_kind)
        self.report({"INFO"}, f"Imported mission {name}: {len(placed)} placed objects ({kinds}), "
                              f"{len(owned)} clan colours, {mesh_objs} mesh objects sharing "
                              f"{meshes} meshes, {len(groups)} groups"
                              + (f"; msh2gltf printed {warned} warning(s)" if warned else ""))
        return {"FINISHED"}


def mission_collection(context):
    """The imported mission the user is working on: the active collection
    or one above it, or the mission holding the active object, or the only
    mission in the scene; None otherwise."""
    missions = [c for c in bpy.data.collections if RECORD in c.keys()]

    def owner(c):
        for m in missions:
            if c == m or c.name in m.children_recursive:
                return m
        return None

    hit = owner(context.view_layer.active_layer_collection.collection)
    if hit is not None:
        return hit
    o = context.active_object
    if o is not None:
        for m in missions:
            if o.name in m.all_objects:
                return m
    shown = [m for m in missions if any(o.name in context.scene.objects for o in m.all_objects)]
    return shown[0] if len(shown) == 1 else None


class EXPORT_SCENE_OT_parkan_mission(tools.RunsTools, bpy.types.Operator, ExportHelper):
    """Write the imported mission's edits (moved, turned, deleted and copied objects) into a
    data.tma, against the data.tma it was imported from"""
    bl_idname = "export_scene.parkan_mission"
    bl_label = "Export Parkan mission"
    bl_options = {"REGISTER"}

    filename_ext = ".tma"
    filter_glob: StringProperty(default="*.tma;*.TMA", options={"HIDDEN"})
    replace_file: BoolProperty(
        name="Replace existing file", default=False,
        description="Replace the chosen file if it exists (gltf2msh --force); off: an existing "
                    "file is kept and the export fails with a message")
    drop_to_ground: BoolProperty(
        name="Set moved objects on the ground", default=False,
        description="Set every moved or copied object on the ground as the game places it "
                    "(gltf2msh --drop-to-ground: a unit's lowest vertex on the terrain, trees and "
                    "rocks keeping their height above it, a building on the mean ground of its "
                    "outer ring); off: heights are written as they are, and each object left more "
                    "than 0.25 off the ground is named in a warning")
    install: BoolProperty(
        name="Install into the game", default=False,
        description="Write the mission over its own data.tma in the game's mission folder "
                    "(gltf2msh --in-place); the original is kept once (File > Export > Parkan: "
                    "restore the game puts it back); the chosen file is not used")

    def invoke(self, context, event):
        coll = mission_collection(context)
        if coll is not None and not self.filepath:
            src = coll[RECORD]["source"]
            self.filepath = os.path.join(os.path.dirname(src), "data_edit.tma")
        return ExportHelper.invoke(self, context, event)

    def draw(self, context):
        coll = mission_collection(context)
        if coll is not None:
            self.layout.label(text=f"Mission: {coll.name}", icon="OUTLINER_COLLECTION")
            self.layout.label(text=str(coll[RECORD]["source"])[-60:])
        else:
            self.layout.label(text="Make an object of the mission active", icon="ERROR")
        self.layout.prop(self, "install")
        if not self.install:
            self.layout.prop(self, "replace_file")
        self.layout.prop(self, "drop_to_ground")

    def run(self, context):
        from . import binary
        g2m = binary(context, "gltf2msh")
        coll = mission_collection(context)
        if coll is None:
            raise tools.ToolError("no mission to export: import one with File > Import > Parkan "
                                  "mission and make one of its objects (or its collection) active")
        rec = sc.idprop_dict(coll[RECORD])
        base = rec.get("source", "")
        if not os.path.isfile(base):
            raise tools.ToolError(f"the mission's data.tma {base} is not there any more")
        out = bpy.path.ensure_ext(os.path.abspath(bpy.path.abspath(self.filepath)), ".tma")
        tmp = tempfile.mkdtemp(prefix="parkan_mission_")
        progress = job.Progress(context, 2, "mission export")
        try:
            glb = os.path.join(tmp, "mission.glb")
            progress.step(0, text="Blender's glTF export")
            # A whole-folder import's grid offset out while exporting (layout.py).
            parked = layout.park([coll])
            marked = mark_owners(coll)
            try:
                self.export(context, glb, coll)
            finally:
                unmark_owners(marked)
                layout.unpark(parked)
            progress.step(text="gltf2msh")
            names = parse_text(rec.get("names") or "{}")
            fix_text_extras(glb, parse_text(rec.get("extras")) or None,
                            names if isinstance(names, dict) else None)
            rep = os.path.join(tmp, "report.json")
            cmd = self.command(g2m, glb, base, out, rep, coll)
            out = self.written_to(coll, out)
            code, err = tools.run(cmd, lambda l: (print("parkan:", l), progress.line(l)))
            progress.step(text="done")
            if code != 0:
                raise tools.ToolError(tools.consent_hint(
                    tools.last_error(err) or f"gltf2msh exited with {code}"))
            with open(rep, encoding="utf-8") as f:
                r = json.load(f)
            said = reports.all_warnings(r)
            from . import clans
            mine = (unwritable_edits(coll, said) + clans.renamed_by_hand(coll)
                    + assets_outside(context, coll))
            info, warnings = reports.mission_edit(r, out, base, mine,
                                                  installed=getattr(self, "install", False))
            set_down = [g for g in (r.get("import") or {}).get("ground") or []
                        if isinstance(g, dict) and g.get("set") and abs(g.get("off") or 0) > 1e-3]
            if set_down:
                info += f"; {len(set_down)} object(s) set down on the ground"
            reports.finish(self, context, info, warnings)
            return {"FINISHED"}
        finally:
            progress.end()
            shutil.rmtree(tmp, ignore_errors=True)

    def command(self, g2m, glb, base, out, rep, coll):
        """The gltf2msh command writing `glb` (a subclass writes a new
        mission: newmission.py)."""
        if self.install:
            # Over its own data.tma, the original kept (install.py).
            cmd = [g2m, glb, "--base", base, "--in-place", "--report", rep]
        else:
            cmd = [g2m, glb, "--base", base, "-o", out, "--report", rep] + (
                ["--force"] if self.replace_file else [])
        return cmd + (["--drop-to-ground"] if self.drop_to_ground else [])

    def written_to(self, coll, out):
        """The data.tma the command writes (for the report): with Install,
        the mission's own."""
        if self.install:
            return sc.idprop_dict(coll[RECORD]).get("source", out)
        return out

    def export(self, context, glb, coll):
        from . import export_gltf
        view_layer = context.view_layer
        old_active = view_layer.active_layer_collection
        try:
            sc.set_active_collection(context, coll)
            res = export_gltf(context, glb, coll, selection=False, sample=False, loose_edges=True)
            if "FINISHED" not in res or not os.path.isfile(glb):
                raise tools.ToolError(f"Blender's glTF export failed ({res})")
        finally:
            view_layer.active_layer_collection = old_active


def menu_import(self, context):
    self.layout.operator(IMPORT_SCENE_OT_parkan_mission.bl_idname,
                         text="Parkan mission (data.tma or a mission folder)")


def menu_export(self, context):
    self.layout.operator(EXPORT_SCENE_OT_parkan_mission.bl_idname, text="Parkan mission (data.tma)")
