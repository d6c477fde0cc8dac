"""Add > Parkan clan: a new clan of the active mission (issue 37 item 4,
mission-notes §2.3, §8.4).

The operator makes an empty at the 3D cursor in the mission's Clans
collection carrying `parkan_clan` = {name, type, minds} without an `index`
(gltf2msh appends it as a new clan: its base is the empty's x and y, its
script and research tree are copied from a clan of the same type, every
clan's relation list gets an entry for it), and its clan collection: link
buildings and units into it to make it their owner. Undoable.

Rename Parkan clan (Object menu, on the active clan empty): the clan's
`parkan_clan` name, its clan collection (name and `CLAN_COLL`, so its
objects' `parkan_owner` names it) and its empty's name together; gltf2msh
writes the rename and renames the clan in every clan's relations. A clan
collection renamed by hand in the outliner is not a rename: the export
says so (`renamed_by_hand`). Undoable.

A clan cannot be deleted: placed objects name their owner by index and
every clan lists every clan, so gltf2msh keeps a clan whose empty was
deleted and says so.
"""

import bpy
from bpy.props import EnumProperty, IntProperty, StringProperty

from . import missions

TYPES = [("0", "Nature", "Animals and the environment (type 0)"),
         ("1", "Player", "A player's clan (type 1)"),
         ("2", "Enemy", "An AI clan (type 2)"),
         ("3", "Neutral", "Neutral: the hero can take over its units (type 3)")]


def clan_names(coll):
    """The names of the mission's clans as they will be written: each clan
    empty's (imported and new), the imported ones whose empty was deleted
    (the mission record), and the clan collections'."""
    names, by_index = [], {}
    for o in coll.all_objects:
        c = missions.props(o, "parkan_clan")
        if not c or not isinstance(c.get("name"), str):
            continue
        if isinstance(c.get("index"), int):
            by_index.setdefault(c["index"], c["name"])
        else:
            names.append(c["name"])
    rec = coll.get(missions.RECORD)
    ex = missions.parse_text(rec.get("extras")) if rec is not None else None
    for k, c in enumerate((ex or {}).get("clans") or []):
        if k not in by_index and isinstance(c, dict) and isinstance(c.get("name"), str):
            names.append(c["name"])
    names += list(by_index.values())
    names += list(missions.clan_collections(coll).values())
    return names


def name_problem(name, names, old=None):
    """Why `name` cannot name a clan among `names` (the clan `old`
    excluded), or None: empty, a NUL, not Windows-1251, or taken whatever
    the case (relations match clans by name)."""
    if not name:
        return "a clan needs a name"
    if "\0" in name:
        return f"{name!r}: a clan name holds no NUL character"
    try:
        name.encode("cp1251")
    except UnicodeEncodeError:
        return (f"{name!r}: the game stores names in Windows-1251; use Latin or Cyrillic "
                "letters")
    taken = [n for n in names if n.lower() == name.lower()
             and (old is None or n.lower() != old.lower())]
    if taken:
        return (f"the mission has a clan named {taken[0]!r} (relations match clans by name, "
                "whatever the case): choose another name")
    return None


class OBJECT_OT_parkan_add_clan(bpy.types.Operator):
    """Add a clan to the active Parkan mission: an empty at the 3D cursor (its base) and its
    clan collection (link buildings and units into it to make it their owner)"""
    bl_idname = "object.parkan_add_clan"
    bl_label = "Add Parkan clan"
    bl_options = {"REGISTER", "UNDO"}

    name: StringProperty(name="Name", default="Clan II",
                         description="The clan's name (unique in the mission, whatever the case)")
    clan_type: EnumProperty(name="Type", items=TYPES, default="2")
    minds: IntProperty(name="Minds", default=5, min=0, max=100,
                       description="Bots the clan may field at once (5 on most shipped clans)")

    @classmethod
    def poll(cls, context):
        return missions.mission_collection(context) is not None

    def execute(self, context):
        coll = missions.mission_collection(context)
        if coll is None:
            self.report({"ERROR"}, "no mission: import one with File > Import > Parkan mission")
            return {"CANCELLED"}
        name = self.name.strip()
        why = name_problem(name, clan_names(coll))
        if why:
            self.report({"ERROR"}, why)
            return {"CANCELLED"}
        parent = missions.clans_parent(coll)
        empty = bpy.data.objects.new(name, None)
        empty.empty_display_type = "SINGLE_ARROW"
        empty.empty_display_size = 10.0
        empty.location = context.scene.cursor.location
        parent.objects.link(empty)
        empty["parkan_clan"] = {"name": name, "type": int(self.clan_type), "minds": self.minds}
        clan_coll = missions.new_clan_collection(parent, name)
        self.report({"INFO"}, f"Added clan {name} ({TYPES[int(self.clan_type)][1].lower()}): its "
                              f"base is the empty {empty.name}; link buildings and units into "
                              f"the collection {clan_coll.name} to make it their owner")
        return {"FINISHED"}


def rename(coll, empty, new):
    """Renames the clan of the clan empty `empty` to `new` (checked by the
    caller): its `parkan_clan` name (a `name_b64` dropped: the text is the
    name now), its clan collection (name and `CLAN_COLL`) and the empty's
    name. Returns the old name."""
    x = missions.props(empty, "parkan_clan")
    old = x.get("name") if isinstance(x.get("name"), str) else None
    raw = empty["parkan_clan"]
    if isinstance(raw, str):  # Blender kept the extras as Python text
        x["name"] = new
        x.pop("name_b64", None)
        empty["parkan_clan"] = repr(x)
    else:
        raw["name"] = new
        if "name_b64" in raw.keys():
            del raw["name_b64"]
    for c, name in missions.clan_collections(coll).items():
        if old is not None and name == old:
            c[missions.CLAN_COLL] = new
            c.name = new
    if old and old in empty.name:
        empty.name = empty.name.replace(old, new, 1)
    return old


def renamed_by_hand(coll):
    """One text per clan collection whose name was edited in the outliner
    (not `CLAN_COLL` or it with Blender's `.001`): not a rename (export)."""
    out = []
    for c, name in sorted(missions.clan_collections(coll).items(), key=lambda p: p[0].name):
        head, _, tail = c.name.rpartition(".")
        if c.name != name and not (head == name and tail.isdigit()):
            out.append(f"clan collection {c.name}: renamed in the outliner: the clan is still "
                       f"{name!r} (not written; rename a clan with Object > Rename Parkan clan "
                       "on its empty)")
    return out


class OBJECT_OT_parkan_rename_clan(bpy.types.Operator):
    """Rename the clan of the active clan empty: its name, its clan collection and the empty
    (File > Export > Parkan mission writes it, renamed in every clan's relations)"""
    bl_idname = "object.parkan_rename_clan"
    bl_label = "Rename Parkan clan"
    bl_options = {"REGISTER", "UNDO"}

    name: StringProperty(name="Name", default="",
                         description="The clan's new name (unique in the mission, whatever the case)")

    @classmethod
    def poll(cls, context):
        o = context.active_object
        return o is not None and bool(missions.props(o, "parkan_clan"))

    def invoke(self, context, event):
        x = missions.props(context.active_object, "parkan_clan")
        self.name = x.get("name") or ""
        return context.window_manager.invoke_props_dialog(self)

    def execute(self, context):
        empty = context.active_object
        coll = missions.mission_collection(context)
        if empty is None or not missions.props(empty, "parkan_clan") or coll is None:
            self.report({"ERROR"}, "make a clan empty of a mission active (in its Clans collection)")
            return {"CANCELLED"}
        old = missions.props(empty, "parkan_clan").get("name")
        name = self.name.strip()
        why = name_problem(name, clan_names(coll), old if isinstance(old, str) else None)
        if why:
            self.report({"ERROR"}, why)
            return {"CANCELLED"}
        old = rename(coll, empty, name)
        self.report({"INFO"}, f"Renamed clan {old} → {name}: export the mission to write it "
                              "(every clan's relations follow)")
        return {"FINISHED"}


def menu_rename(self, context):
    self.layout.operator(OBJECT_OT_parkan_rename_clan.bl_idname, text="Rename Parkan clan")


def menu_add(self, context):
    self.layout.operator(OBJECT_OT_parkan_add_clan.bl_idname, text="Parkan clan")
