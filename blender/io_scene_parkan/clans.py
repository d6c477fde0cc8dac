"""Add > Parkan clan: a new clan of the active mission (issue 37 item 4,
mission-notes §2.3, §8.4).

The operator makes an empty at the 3D cursor in the mission's Clans
collection carrying `parkan_clan` = {name, type, minds} without an `index`
(gltf2msh appends it as a new clan: its base is the empty's x and y, its
script and research tree are copied from a clan of the same type, every
clan's relation list gets an entry for it), and its clan collection: link
buildings and units into it to make it their owner. Undoable.

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
    """The names of the mission's clans: the imported ones (the mission
    record) and the new clans' empties."""
    names = []
    rec = coll.get(missions.RECORD)
    ex = missions.parse_text(rec.get("extras")) if rec is not None else None
    for c in (ex or {}).get("clans") or []:
        if isinstance(c, dict) and isinstance(c.get("name"), str):
            names.append(c["name"])
    for o in coll.all_objects:
        c = missions.props(o, "parkan_clan")
        if c and "index" not in c and isinstance(c.get("name"), str):
            names.append(c["name"])
    names += list(missions.clan_collections(coll).values())
    return names


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
        if not name:
            self.report({"ERROR"}, "a clan needs a name")
            return {"CANCELLED"}
        try:
            name.encode("cp1251")
        except UnicodeEncodeError:
            self.report({"ERROR"}, f"{name!r}: the game stores names in Windows-1251; use "
                                   "Latin or Cyrillic letters")
            return {"CANCELLED"}
        taken = [n for n in clan_names(coll) if n.lower() == name.lower()]
        if taken:
            self.report({"ERROR"}, f"the mission has a clan named {taken[0]!r} (relations match "
                                   "clans by name, whatever the case): choose another name")
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


def menu_add(self, context):
    self.layout.operator(OBJECT_OT_parkan_add_clan.bl_idname, text="Parkan clan")
