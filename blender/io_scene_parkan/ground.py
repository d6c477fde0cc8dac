"""Object > Parkan: Drop to ground: the selected placed objects of an
imported mission set on the ground as the game places them
(mission-notes §5.4: a unit's lowest vertex on the terrain, scenery keeping
its origin's offset above the ground, a building on the mean ground of its
.bas outer ring unless its start flag is set; units inside buildings are
not touched).

The rule lives once, in gltf2msh: this operator exports the mission as
File > Export > Parkan mission does, runs `gltf2msh --drop-to-ground` into
a temporary data.tma, and reads the heights from its `--report` rows
(`import.ground`: node name, the rule's z) back onto the selected objects.
Nothing is written to the game. Undoable (Ctrl+Z); what it could not do is
reported as text.
"""

import json
import os
import shutil
import tempfile

import bpy

from . import job
from . import layout
from . import missions
from . import scene as sc
from . import tools


def placed_owner(o):
    """The placed object (`parkan_object` extras) `o` is, or belongs to (a
    piece of its model); None when it is neither."""
    while o is not None:
        if missions.props(o):
            return o
        o = o.parent
    return None


def ground_rows(context, coll, g2m, progress):
    """{node name: report row} of `gltf2msh --drop-to-ground` over the
    mission collection `coll` as it stands, and the run's warnings."""
    rec = sc.idprop_dict(coll[missions.RECORD])
    base = rec.get("source", "")
    if not os.path.isfile(base):
        raise tools.ToolError(f"the mission's data.tma {base} is not there any more")
    tmp = tempfile.mkdtemp(prefix="parkan_ground_")
    try:
        glb = os.path.join(tmp, "mission.glb")
        progress.step(0, text="Blender's glTF export")
        parked = layout.park([coll])
        try:
            missions.EXPORT_SCENE_OT_parkan_mission.export(None, context, glb, coll)
        finally:
            layout.unpark(parked)
        names = missions.parse_text(rec.get("names") or "{}")
        missions.fix_text_extras(glb, missions.parse_text(rec.get("extras")) or None,
                                 names if isinstance(names, dict) else None)
        progress.step(text="gltf2msh --drop-to-ground")
        rep = os.path.join(tmp, "report.json")
        cmd = [g2m, glb, "--base", base, "-o", os.path.join(tmp, "grounded.tma"),
               "--report", rep, "--drop-to-ground", "--quiet"]
        code, err = tools.run(cmd, progress.line)
        if code != 0 or not os.path.isfile(rep):
            raise tools.ToolError(tools.last_error(err) or f"gltf2msh exited with {code}")
        with open(rep, encoding="utf-8") as f:
            r = json.load(f)
        imp = r.get("import") or {}
        rows = {}
        for row in imp.get("ground") or []:
            if isinstance(row, dict) and isinstance(row.get("node"), str):
                rows[row["node"]] = row
        return rows, [w for w in imp.get("warnings") or [] if isinstance(w, str)]
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


class OBJECT_OT_parkan_drop_to_ground(tools.RunsTools, bpy.types.Operator):
    """Set the selected buildings, units, trees and rocks of an imported Parkan mission on the
    ground as the game places them (the heights come from gltf2msh --drop-to-ground)"""
    bl_idname = "object.parkan_drop_to_ground"
    bl_label = "Drop to ground (Parkan mission)"
    bl_options = {"REGISTER", "UNDO"}

    @classmethod
    def poll(cls, context):
        return bool(context.selected_objects)

    def run(self, context):
        from . import binary
        coll = missions.mission_collection(context)
        if coll is None:
            raise tools.ToolError("no mission: import one with File > Import > Parkan mission and "
                                  "select its objects")
        chosen = []
        for o in context.selected_objects:
            p = placed_owner(o)
            if p is not None and p not in chosen and p.name in coll.all_objects:
                chosen.append(p)
        if not chosen:
            raise tools.ToolError("select placed objects of the mission (buildings, units, trees, "
                                  "rocks: the objects named B.., U.., V.., R..)")
        g2m = binary(context, "gltf2msh")
        progress = job.Progress(context, 2, "drop to ground")
        try:
            rows, warnings = ground_rows(context, coll, g2m, progress)
        finally:
            progress.end()
        set_down, kept, said = [], [], []
        for o in chosen:
            row = rows.get(o.name)
            if row is None:
                kept.append(o.name)
                continue
            z = row.get("ground_z")
            if not isinstance(z, (int, float)):
                continue
            m = o.matrix_world.copy()
            if abs(m.translation.z - z) > 1e-4:
                m.translation.z = z
                o.matrix_world = m
                set_down.append(o.name)
        names = set(c.name for c in chosen)
        for w in warnings:
            if w.split(":", 1)[0] in names:
                said.append(w)
                self.report({"WARNING"}, w)
        text = f"Drop to ground: {len(set_down)} of {len(chosen)} selected object(s) set down"
        if kept:
            text += (f"; {len(kept)} left where they are (not moved since the import, so where "
                     f"the game places them, or a unit inside a building: {', '.join(kept[:5])}"
                     + (" ..." if len(kept) > 5 else "") + ")")
        self.report({"INFO"}, text)
        if said:
            tools.show_popup(context, said)
        return {"FINISHED"}


def menu_object(self, context):
    self.layout.operator(OBJECT_OT_parkan_drop_to_ground.bl_idname, text="Drop to ground (Parkan)")
