"""A new Parkan mission in Blender (issue 38 item 2; mission-notes §8.7
"Without a base", §1.1, §5.5).

File > New > Parkan mission: the game folder, a template mission (its
header, clans, `mission.cfg`, `Mistips.mis`, `messages.cfg`,
`briefing.cfg` and `sky.*` as they are), a map (one of the game's maps) and
a name. `gltf2msh --new-mission GAME/MISSIONS --template ... --map ...
--name ...` makes `MISSIONS/Single.<next free n>/` (the game's menu lists
it) with `descr` = the name and a `data.tma` holding the template's player
clan and first enemy clan, each with a base on the new map, and no placed
objects; then File > Import > Parkan mission opens it, so the modder sees
the map, the two clans' bases and nothing else. The mission collection
remembers that it is new (its template, map and folder).

File > Export > Parkan new mission: the mission export's own steps
(Blender's glTF export of the collection, the extras fixed), then `gltf2msh
level.glb --new-mission FOLDER --template ... --map ... --name ... --force`:
the scene written over the starting mission by the write-back of every
mission edit, refused (as text) when the player's clan owns no hero. Its
"Drop to ground" option adds `--drop-to-ground` (every placed object set on
the map's ground by the rule of mission-notes §5.4, as the mission
export's option does); without it each object left more than 0.25 off the
ground is a warning, shown as text like every export's. Later
edits may also go through File > Export > Parkan mission against the new
`data.tma`.

Object > Add Parkan route: a square loop of four edges at the 3D cursor,
in the mission's Routes collection, marked as a new route (custom property
`parkan_route` without an index): the export adds it to the mission.
"""

import json
import os
import shutil
import tempfile

import bpy
from bpy.props import BoolProperty, EnumProperty, FloatProperty, StringProperty

from . import com
from . import job
from . import missions
from . import scene as sc
from . import tools

# The mission collection's record key (missions.RECORD) entry of a new
# mission: JSON text {"folder", "template", "map", "name"}.
NEW_KEY = "new_mission"
# Enum items must outlive the callback (Blender keeps pointers to them).
_items = {"templates": [], "maps": []}


def game_missions(game):
    """The game's missions, each a folder of GAME/MISSIONS holding
    data.tma, as game-relative paths with '/' (`MISSIONS/Single.01`),
    sorted."""
    out = []
    root = os.path.join(game, "MISSIONS") if game else ""
    for d in [root] if os.path.isdir(root) else []:
        for here, dirs, files in os.walk(d):
            dirs.sort()
            if any(f.lower() == "data.tma" for f in files):
                out.append(os.path.relpath(here, game).replace(os.sep, "/"))
    return sorted(out)


def game_maps(game):
    """The game's maps: folders of GAME/MAPS or GAME/DATA/MAPS (any case)
    holding Land.msh, as game-relative paths with '/', sorted."""
    out = []
    if not game or not os.path.isdir(game):
        return out
    tops = [game] + [os.path.join(game, d) for d in os.listdir(game)
                     if d.lower() == "data" and os.path.isdir(os.path.join(game, d))]
    for top in tops:
        for d in os.listdir(top):
            maps = os.path.join(top, d)
            if d.lower() != "maps" or not os.path.isdir(maps):
                continue
            for m in sorted(os.listdir(maps)):
                p = os.path.join(maps, m)
                if os.path.isdir(p) and any(f.lower() == "land.msh" for f in os.listdir(p)):
                    out.append(os.path.relpath(p, game).replace(os.sep, "/"))
    return sorted(out)


def _game(self, context):
    return com.game_dir(context, self.game_dir)


def _template_items(self, context):
    found = game_missions(_game(self, context))
    _items["templates"] = [(m, m, f"Start from {m}") for m in found] or [
        ("", "(no missions in the game folder)", "")]
    return _items["templates"]


def _map_items(self, context):
    found = game_maps(_game(self, context))
    _items["maps"] = [(m, m, f"The map {m}") for m in found] or [
        ("", "(no maps in the game folder)", "")]
    return _items["maps"]


def new_mission_collection(tma):
    """The mission collection imported from `tma` (the newest, when the
    same mission was imported twice)."""
    want = os.path.normcase(os.path.abspath(tma))
    hits = [c for c in bpy.data.collections if missions.RECORD in c.keys()
            and os.path.normcase(os.path.abspath(str(c[missions.RECORD]["source"]))) == want]
    return hits[-1] if hits else None


class PARKAN_OT_new_mission(tools.RunsTools, bpy.types.Operator):
    """Make a new Parkan mission (MISSIONS/Single.<n>) from a template mission, on a map of the
    game, with the player's clan and an enemy clan and no placed objects, and open it"""
    bl_idname = "parkan.new_mission"
    bl_label = "New Parkan mission"
    bl_options = {"REGISTER", "UNDO"}

    game_dir: StringProperty(name="Game folder", subtype="DIR_PATH",
                             description="The game folder (holding MISSIONS, MAPS and "
                                         "objects.rlb); empty: the add-on preferences'")
    template: EnumProperty(name="Template", items=_template_items,
                           description="The mission whose header, clans, mission.cfg, "
                                       "Mistips.mis, messages.cfg, briefing.cfg and sky are "
                                       "copied")
    map: EnumProperty(name="Map", items=_map_items, description="The new mission's map")
    name: StringProperty(name="Name", default="New mission",
                         description="The mission's title in the game's menu (descr)")
    folder: StringProperty(name="Folder", subtype="DIR_PATH", default="",
                           description="The new mission's folder; empty: the next free "
                                       "MISSIONS/Single.<n> of the game folder")

    def invoke(self, context, event):
        return context.window_manager.invoke_props_dialog(self, width=420)

    def draw(self, context):
        for p in ("game_dir", "template", "map", "name", "folder"):
            self.layout.prop(self, p)

    def run(self, context):
        from . import binary
        g2m = binary(context, "gltf2msh")
        game = _game(self, context)
        if not game or not os.path.isdir(game):
            raise tools.ToolError("no game folder: give one (or set it in the add-on's "
                                  "preferences)")
        if not self.template or not self.map:
            raise tools.ToolError(f"{game}: choose a template mission and a map (the game "
                                  f"folder needs MISSIONS/<...>/data.tma and MAPS/<map>/Land.msh)")
        target = bpy.path.abspath(self.folder) if self.folder else os.path.join(game, "MISSIONS")
        tmp = tempfile.mkdtemp(prefix="parkan_newmission_")
        progress = job.Progress(context, 2, "new mission")
        try:
            rep = os.path.join(tmp, "report.json")
            template = os.path.join(game, self.template)
            map_dir = os.path.join(game, self.map)
            cmd = [g2m, "--new-mission", target, "--template", template, "--map", map_dir,
                   "--name", self.name, "--game-dir", game, "--report", rep]
            progress.step(0, text="gltf2msh --new-mission")
            code, err = tools.run(cmd, lambda l: (print("parkan:", l), progress.line(l)))
            if code != 0:
                raise tools.ToolError(tools.last_error(err) or f"gltf2msh exited with {code}")
            with open(rep, encoding="utf-8") as f:
                r = (json.load(f).get("import") or {})
            folder = str(r.get("folder", ""))
            tma = os.path.join(folder, "data.tma")
            progress.step(text="import")
            res = bpy.ops.import_scene.parkan_mission(filepath=tma, textures=True)
            if "FINISHED" not in res:
                raise tools.ToolError(f"the new mission {folder} was written but its import did "
                                      f"not finish ({res})")
            coll = new_mission_collection(tma)
            if coll is not None:
                coll[missions.RECORD][NEW_KEY] = json.dumps(
                    {"folder": folder, "template": template, "map": map_dir, "name": self.name,
                     "game": game})
            warnings = [str(w) for w in r.get("warnings", [])]
            self.report({"INFO"}, f"New mission {os.path.basename(folder)} \"{self.name}\" on "
                                  f"{self.map} from {self.template}: "
                                  f"{', '.join(r.get('files', []))}; {r.get('clans', 0)} clans "
                                  f"with bases, no placed objects. Place the player's hero "
                                  f"(a unit of the player's clan) before exporting with File > "
                                  f"Export > Parkan new mission")
            self.report_warnings(context, warnings)
            return {"FINISHED"}
        finally:
            progress.end()
            shutil.rmtree(tmp, ignore_errors=True)


class EXPORT_SCENE_OT_parkan_new_mission(tools.RunsTools, bpy.types.Operator):
    """Write the new mission made with File > New > Parkan mission: its objects, clans, bases
    and routes over the starting mission, into its folder (the player's clan must own a hero)"""
    bl_idname = "export_scene.parkan_new_mission"
    bl_label = "Export Parkan new mission"
    bl_options = {"REGISTER"}

    filepath: StringProperty(subtype="FILE_PATH", options={"HIDDEN"})
    drop_to_ground: BoolProperty(
        name="Drop to ground", default=False,
        description="Set every placed object on the new mission's map as the game places it "
                    "(gltf2msh --new-mission ... --drop-to-ground, the rule of File > Export > "
                    "Parkan mission's option: a unit's lowest vertex on the terrain, trees and "
                    "rocks at their origin on the ground, a building on the mean ground of its "
                    "outer ring); off: heights are written as they are, and each object more "
                    "than 0.25 off the ground is named in a warning")
    # The mission export's own steps (a registered operator class cannot be
    # subclassed: Blender then loses the parent's Python class).
    run = missions.EXPORT_SCENE_OT_parkan_mission.run
    export = missions.EXPORT_SCENE_OT_parkan_mission.export

    def invoke(self, context, event):
        coll = missions.mission_collection(context)
        new = self.new_record(coll) if coll is not None else None
        if new:
            self.filepath = os.path.join(new["folder"], "data.tma")
        return context.window_manager.invoke_props_dialog(self, width=420)

    def draw(self, context):
        coll = missions.mission_collection(context)
        new = self.new_record(coll) if coll is not None else None
        if new:
            self.layout.label(text=f"New mission: {new.get('name', '')}",
                              icon="OUTLINER_COLLECTION")
            self.layout.label(text=str(new.get("folder", ""))[-60:])
        else:
            self.layout.label(text="Make an object of the new mission active", icon="ERROR")
        self.layout.prop(self, "drop_to_ground")

    @staticmethod
    def new_record(coll):
        """The collection's new-mission record (dict), or None."""
        rec = sc.idprop_dict(coll[missions.RECORD])
        v = rec.get(NEW_KEY)
        return missions.parse_text(v) if v else None

    def command(self, g2m, glb, base, out, rep, coll):
        new = self.new_record(coll)
        if not new:
            raise tools.ToolError(f"{coll.name} is not a new mission (made with File > New > "
                                  f"Parkan mission): export it with File > Export > Parkan "
                                  f"mission")
        return [g2m, glb, "--new-mission", new["folder"], "--template", new["template"],
                "--map", new["map"], "--name", new["name"], "--game-dir", new["game"],
                "--force", "--report", rep] + (["--drop-to-ground"] if self.drop_to_ground else [])

    def written_to(self, coll, out):
        new = self.new_record(coll)
        return os.path.join(new["folder"], "data.tma") if new else out


class OBJECT_OT_parkan_add_route(bpy.types.Operator):
    """Add a new route (a closed polygon scripts test: mission-notes §2.2) to the active mission:
    a square loop of four edges at the 3D cursor; move its vertices to shape it"""
    bl_idname = "object.parkan_add_route"
    bl_label = "Add Parkan route"
    bl_options = {"REGISTER", "UNDO"}

    size: FloatProperty(name="Size", default=20.0, min=0.1,
                        description="The square's side (game units)")

    def execute(self, context):
        coll = missions.mission_collection(context)
        if coll is None:
            self.report({"ERROR"}, "no mission: import one (or make one with File > New > "
                                   "Parkan mission) and make its collection active")
            return {"CANCELLED"}
        routes = next((c for c in coll.children if c.get("parkan_group") == "Routes"), None)
        if routes is None:
            routes = sc.new_collection("Routes", coll)
            routes["parkan_group"] = "Routes"
        h = self.size / 2
        me = bpy.data.meshes.new("New route")
        me.from_pydata([(-h, -h, 0), (h, -h, 0), (h, h, 0), (-h, h, 0)],
                       [(0, 1), (1, 2), (2, 3), (3, 0)], [])
        o = bpy.data.objects.new("New route", me)
        o.location = context.scene.cursor.location
        o["parkan_route"] = {"new": 1}
        routes.objects.link(o)
        self.report({"INFO"}, f"Added {o.name} to {coll.name}: the export writes it as a new "
                              f"route")
        return {"FINISHED"}


def menu_new(self, context):
    self.layout.operator(PARKAN_OT_new_mission.bl_idname, text="Parkan mission")


def menu_export(self, context):
    self.layout.operator(EXPORT_SCENE_OT_parkan_new_mission.bl_idname,
                         text="Parkan new mission (into its folder)")


def menu_add(self, context):
    self.layout.operator(OBJECT_OT_parkan_add_route.bl_idname, text="Parkan route")


classes = (PARKAN_OT_new_mission, EXPORT_SCENE_OT_parkan_new_mission, OBJECT_OT_parkan_add_route)
MENUS = (("TOPBAR_MT_file_new", menu_new), ("TOPBAR_MT_file_export", menu_export),
         ("VIEW3D_MT_add", menu_add))


def register():
    for c in classes:
        bpy.utils.register_class(c)
    for menu, fn in MENUS:
        getattr(bpy.types, menu).append(fn)


def unregister():
    for menu, fn in reversed(MENUS):
        getattr(bpy.types, menu).remove(fn)
    for c in reversed(classes):
        bpy.utils.unregister_class(c)
