"""A new map (issue 38; docs/modding.md "Make a new level"):

File > New > Parkan map (`object.parkan_new_map`) makes a grid object of a
size the game supports (8x8 or 16x16 squares, each cut into quads of two
triangles; square side 49..312 units) with the palette map's terrain
materials, set up as the map importer sets them (msh2gltf's export of the
palette's Land.msh, imported and wired by `terrain.wire_map`; the palette's
own mesh is then removed). Sculpt it (X and Y are locked in Sculpt mode, so
only heights change) and paint faces by assigning those materials (an
`A+B` material is a two-material patch).

File > Export > Parkan new map (`export_scene.parkan_new_map`) exports the
grid object alone and runs `gltf2msh terrain.glb --new-map MAPS/<name>
--palette MAPS/<palette>`: a new map folder (Land.msh, Land.map,
Land1.wea, Land2.wea). What gltf2msh refuses (a hole, a face turned down,
a vertex off the grid, a material not of the palette) is reported as its
text, naming the vertex, face or quad and what to do.
"""

import os
import shutil
import tempfile

import bpy
from bpy.props import BoolProperty, EnumProperty, FloatProperty, IntProperty, StringProperty

from . import compat
from . import reports
from . import terrain
from . import tools
from .com import binary, game_dir

GRID_PROPS = ("parkan_map_squares", "parkan_map_quads", "parkan_map_side")


def maps_dir(context, own=""):
    """The game folder's MAPS folder (any case), or ""."""
    gd = game_dir(context, own)
    if not gd or not os.path.isdir(gd):
        return ""
    for n in os.listdir(gd):
        if n.lower() == "maps" and os.path.isdir(os.path.join(gd, n)):
            return os.path.join(gd, n)
    return ""


def file_any_case(folder, name):
    try:
        for n in os.listdir(folder):
            if n.lower() == name.lower():
                return os.path.join(folder, n)
    except OSError:
        pass
    return None


def palette_materials(context, palette):
    """The palette map's terrain materials, as the map importer makes them:
    msh2gltf's export of its Land.msh imported by Blender's glTF importer
    and wired (`terrain.wire_map`); the imported objects are removed."""
    land = file_any_case(palette, "Land.msh")
    if land is None:
        raise tools.ToolError(f"palette {palette}: no Land.msh there (a palette is an existing map folder)")
    tmp = tempfile.mkdtemp(prefix="parkan_newmap_")
    try:
        glb = os.path.join(tmp, "palette.glb")
        cmd = [binary(context, "msh2gltf"), land, glb, "--force"]
        gd = game_dir(context, "")
        if gd:
            cmd += ["--game-dir", gd]
        code, err = tools.run(cmd)
        if code != 0:
            raise tools.ToolError(f"msh2gltf {land}: {tools.last_error(err)}")
        objs, mats = set(bpy.data.objects), set(bpy.data.materials)
        compat.gltf_import(glb)
        new_objs = [o for o in bpy.data.objects if o not in objs]
        new_mats = [m for m in bpy.data.materials if m not in mats]
        terrain.wire_map(glb, new_objs, new_mats)
        uv_names = next(([u.name for u in o.data.uv_layers] for o in new_objs if o.type == "MESH"), [])
        for o in new_objs:
            data = o.data
            bpy.data.objects.remove(o, do_unlink=True)
            if data is not None and data.users == 0 and isinstance(data, bpy.types.Mesh):
                bpy.data.meshes.remove(data)
        bpy.context.view_layer.update()
        names = set(terrain.terrain_materials(tools.read_glb(glb)[0]))
        return [m for m in new_mats if m.name in names or m.name.rsplit(".", 1)[0] in names], uv_names
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def plain(m):
    """A one-material ground (no second material, no liquid)."""
    return "+" not in m.name and not m.get("parkan_water") and not m.get("parkan_bed")


def planar_uvs(me, names, side):
    """UV maps named as the map importer's (`names`: UV 1, UV 2) with the
    map's planar projections (terrain-notes §5.1: Res5 x/200, Res18 x/20,
    v from the map's top; Blender's v = 1 - glTF's), so the palette's
    materials find their UV maps (and Blender's exporter its texCoord)."""
    for k, (name, turn) in enumerate(zip(names[:2], (200.0, 1024.0 / 51.2))):
        layer = me.uv_layers.new(name=name)
        if layer is None:
            return
        for loop in me.loops:
            co = me.vertices[loop.vertex_index].co
            layer.data[loop.index].uv = (co.x / turn, 1.0 - (side - co.y) / turn)


def make_grid(context, name, squares, quads, side, mats, uv_names=()):
    """The grid object: (n+1)^2 vertices on the nodes, two triangles a quad
    (split along (i, j)-(i+1, j+1), counter-clockwise from +Z), every face
    the first plain material; the grid and palette as custom properties
    (glTF node extras gltf2msh reads)."""
    n = squares * quads
    verts = [(side * i / n, side * j / n, 0.0) for i in range(n + 1) for j in range(n + 1)]
    faces = []
    for i in range(n):
        for j in range(n):
            a, b = i * (n + 1) + j, (i + 1) * (n + 1) + j
            faces += [(a, b, b + 1), (a, b + 1, a + 1)]
    me = bpy.data.meshes.new(name)
    me.from_pydata(verts, [], faces)
    planar_uvs(me, list(uv_names) or ["UVMap", "UVMap.001"], side)
    me.update()
    mats = sorted(mats, key=lambda m: (not plain(m), m.name))
    for m in mats:
        me.materials.append(m)
    obj = bpy.data.objects.new(name, me)
    context.collection.objects.link(obj)
    obj["parkan_map_squares"] = int(squares)
    obj["parkan_map_quads"] = int(quads)
    obj["parkan_map_side"] = float(side)
    return obj


class OBJECT_OT_parkan_new_map(bpy.types.Operator, tools.RunsTools):
    """A new Parkan map: a height grid with a palette map's ground materials"""
    bl_idname = "object.parkan_new_map"
    bl_label = "New Parkan map"
    bl_options = {"REGISTER", "UNDO"}

    name: StringProperty(name="Name", default="NewMap")
    squares: EnumProperty(
        name="Squares", default="8",
        items=[("8", "8 x 8", "8x8 grid squares (5 retail maps)"),
               ("16", "16 x 16", "16x16 grid squares (28 retail maps)")])
    quads: IntProperty(name="Quads a square", default=2, min=1, max=15,
                       description="Each square cut into this many quads a side, two triangles each "
                                   "(16x16 squares: at most 7, the game's 65535-face limit)")
    side: FloatProperty(name="Side", default=1600.0, min=790.0, max=2500.0,
                        description="Map side in world units (790..2500, square side 49..312 units, as retail)")
    palette: StringProperty(name="Palette map", subtype="DIR_PATH", default="",
                            description="An existing map folder (MAPS/<name>) whose Land1.wea rows "
                                        "are the materials to paint with (empty: the game folder's first map)")

    def invoke(self, context, event):
        return context.window_manager.invoke_props_dialog(self)

    def palette_dir(self, context):
        if self.palette:
            return bpy.path.abspath(self.palette).rstrip("/\\")
        maps = maps_dir(context)
        for n in sorted(os.listdir(maps)) if maps else []:
            if file_any_case(os.path.join(maps, n), "Land.msh"):
                return os.path.join(maps, n)
        raise tools.ToolError("no palette map: choose one (an existing MAPS/<name> folder), "
                              "or set the game folder in the add-on's preferences")

    def run(self, context):
        pal = self.palette_dir(context)
        cell = self.side / int(self.squares)
        if not 49.0 <= cell <= 312.0 or not 790.0 <= self.side <= 2500.0:
            raise tools.ToolError(f"a square side of {cell:g} units: the game's are 49..312 "
                                  f"(a map side of {max(790, 49 * int(self.squares))}..{min(2500, 312 * int(self.squares))})")
        if int(self.squares) * self.quads * int(self.squares) * self.quads * 4 > 65535:
            raise tools.ToolError(f"{self.squares}x{self.squares} squares of {self.quads}x{self.quads} "
                                  "quads exceed the game's 65535 faces: choose fewer quads")
        mats, uv_names = palette_materials(context, pal)
        if not any(plain(m) for m in mats):
            raise tools.ToolError(f"palette {pal}: no ground material")
        obj = make_grid(context, self.name, int(self.squares), self.quads, self.side, mats, uv_names)
        obj["parkan_map_palette"] = os.path.basename(pal)
        obj["parkan_map_palette_dir"] = pal
        context.view_layer.update()
        for o in context.scene.objects:
            if o is not None and o != obj:
                o.select_set(False)
        obj.select_set(True)
        context.view_layer.objects.active = obj
        if getattr(context.scene.tool_settings, "sculpt", None) is None:
            try:  # the sculpt settings are made when Sculpt mode is first entered
                bpy.ops.object.mode_set(mode="SCULPT")
                bpy.ops.object.mode_set(mode="OBJECT")
            except RuntimeError:
                pass
        if not compat.sculpt_lock_xy(context.scene):
            reports.say(self, "WARNING", "Sculpt mode's X and Y locks could not be set: lock them "
                                         "(Sculpt > Symmetry > Lock) so brushes change heights only")
        reports.say(self, "INFO", f"new map {obj.name}: {self.squares}x{self.squares} squares of "
                                  f"{self.quads}x{self.quads} quads, side {self.side:g}; "
                                  f"{len(mats)} materials of {os.path.basename(pal)}")
        return {"FINISHED"}


def map_object(context):
    """The new map's grid object: the active object if it is one, else the
    only one in the scene."""
    o = context.view_layer.objects.active
    if o is not None and all(k in o.keys() for k in GRID_PROPS):
        return o
    grids = [o for o in context.scene.objects if all(k in o.keys() for k in GRID_PROPS)]
    return grids[0] if len(grids) == 1 else None


class EXPORT_SCENE_OT_parkan_new_map(bpy.types.Operator, tools.RunsTools):
    """Write the New Parkan map object as a new map folder (MAPS/<name>)"""
    bl_idname = "export_scene.parkan_new_map"
    bl_label = "Export as a new Parkan map"

    name: StringProperty(name="Map name", default="",
                         description="The new folder's name (empty: the object's name)")
    directory: StringProperty(name="Maps folder", subtype="DIR_PATH", default="",
                              description="Where the map folder is made (empty: the game folder's MAPS)")
    force: BoolProperty(name="Replace an existing map", default=False)

    def invoke(self, context, event):
        return context.window_manager.invoke_props_dialog(self)

    def run(self, context):
        obj = map_object(context)
        if obj is None:
            raise tools.ToolError("no new map object: make one with File > New > Parkan map "
                                  "(or make it the active object)")
        maps = bpy.path.abspath(self.directory) if self.directory else maps_dir(context)
        if not maps:
            raise tools.ToolError("no maps folder: choose one, or set the game folder in the preferences")
        out = os.path.join(maps, self.name or obj.name)
        tmp = tempfile.mkdtemp(prefix="parkan_newmap_")
        try:
            return self.write(context, obj, out, tmp)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)

    def write(self, context, obj, out, tmp):
        from . import exp
        glb, rep = os.path.join(tmp, "terrain.glb"), os.path.join(tmp, "report.json")
        selected = [o for o in context.scene.objects if o is not None and o.select_get()]
        for o in selected:
            o.select_set(False)
        obj.select_set(True)
        # The game's ground shading out of Base Color (as a map edit's export).
        undo = terrain.bypass(list(obj.data.materials))
        try:
            exp.export_gltf(context, glb, selection=True)
        finally:
            terrain.restore(undo)
            obj.select_set(False)
            for o in selected:
                o.select_set(True)
        cmd = [binary(context, "gltf2msh"), glb, "--new-map", out, "--report", rep]
        pal = obj.get("parkan_map_palette_dir")
        if pal:
            cmd += ["--palette", pal]
        if self.force:
            cmd.append("--force")
        code, err = tools.run(cmd)
        if code != 0:
            raise tools.ToolError(tools.consent_hint(tools.last_error(err)))
        r = _json(rep)
        made = r.get("new_map") or {}
        reports.finish(self, context,
                       f"wrote new map {out}: {made.get('vertices')} vertices, {made.get('faces')} faces, "
                       f"{made.get('areals')} areals ({reports.warning_count(made.get('warnings', []))})",
                       made.get("warnings", []))
        return {"FINISHED"}


def _json(path):
    import json
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError):
        return {}


def menu_new(self, context):
    self.layout.operator(OBJECT_OT_parkan_new_map.bl_idname, text="Parkan map")


def menu_export(self, context):
    self.layout.operator(EXPORT_SCENE_OT_parkan_new_map.bl_idname, text="Parkan new map (MAPS folder)")


classes = (OBJECT_OT_parkan_new_map, EXPORT_SCENE_OT_parkan_new_map)


def register():
    for c in classes:
        bpy.utils.register_class(c)
    bpy.types.TOPBAR_MT_file_new.append(menu_new)
    bpy.types.TOPBAR_MT_file_export.append(menu_export)


def unregister():
    bpy.types.TOPBAR_MT_file_export.remove(menu_export)
    bpy.types.TOPBAR_MT_file_new.remove(menu_new)
    for c in reversed(classes):
        bpy.utils.unregister_class(c)
