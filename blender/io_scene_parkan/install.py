"""Install into the game, undoable (issue 37 item 5; docs/safety.md "An
install keeps the game's originals").

Every "Install into the game" (models, units, maps, missions) runs
gltf2msh with --in-place: the game's original of each file it replaces is
kept, once, in GAME/.mshgltf-originals, in the install's own commit.
`install_text` says so after an install; File > Export > "Parkan: restore
the game" (PARKAN_OT_restore_game) runs `gltf2msh --restore GAME` and
reports each file put back or removed as text."""

import json
import os
import shutil
import tempfile

import bpy
from bpy.props import BoolProperty, StringProperty

from . import reports
from . import tools
from .com import binary, game_dir

# gltf2msh's game folder test: objects.rlb at or above the file's folder
# (output::install, mission::pipeline::GAME_DEPTH).
GAME_DEPTH = 6
STORE = ".mshgltf-originals"


def game_of(path):
    """The game folder holding `path` (a file or ARCHIVE:ENTRY): the
    nearest folder at or above it with objects.rlb (any case); "" when none."""
    p = path if os.path.exists(path) else path.rpartition(":")[0] or path
    d = os.path.dirname(os.path.abspath(p))
    for _ in range(GAME_DEPTH + 1):
        try:
            names = {n.lower() for n in os.listdir(d)}
        except OSError:
            names = set()
        if "objects.rlb" in names:
            return d
        up = os.path.dirname(d)
        if up == d:
            break
        d = up
    return ""


def install_text(r):
    """The clause an install's report adds: which files were replaced or
    added, that the originals are kept and how to restore them; "" when
    the report holds no install (nothing differed)."""
    inst = r.get("install") if isinstance(r, dict) else None
    if not isinstance(inst, dict):
        return ""
    files = [f for f in inst.get("files") or [] if isinstance(f, dict)]
    rep = [str(f.get("path")) for f in files if f.get("replaced")]
    add = [str(f.get("path")) for f in files if not f.get("replaced")]
    parts = []
    if rep:
        first = [str(f.get("path")) for f in files if f.get("replaced") and not f.get("kept_now")]
        parts.append(f"the game's originals of {', '.join(rep)} are kept in {inst.get('store')}"
                     + (f" (kept by an earlier install: {', '.join(first)})" if first else ""))
    if add:
        parts.append(f"added {', '.join(add)}")
    return ("; ".join(parts) + f"; File > Export > Parkan: restore the game "
            f"(gltf2msh --restore {inst.get('game')}) puts every original back")


class PARKAN_OT_restore_game(tools.RunsTools, bpy.types.Operator):
    """Put back every game file an install replaced (byte-identical, from
    GAME/.mshgltf-originals) and remove every file an install added
    (gltf2msh --restore GAME)"""
    bl_idname = "parkan.restore_game"
    bl_label = "Restore the game (Parkan)"
    bl_options = {"REGISTER"}

    game_dir: StringProperty(
        name="Game folder", subtype="DIR_PATH", default="",
        description="The game folder whose installs are undone (empty: the preference)")
    force: BoolProperty(
        name="Also files changed since", default=False,
        description="Also put back files changed since their install (gltf2msh --restore "
                    "--force); off: such a file is named and nothing is restored")

    def invoke(self, context, event):
        if not self.game_dir:
            self.game_dir = game_dir(context, "")
        return context.window_manager.invoke_props_dialog(self)

    def draw(self, context):
        self.layout.prop(self, "game_dir")
        self.layout.prop(self, "force")

    def run(self, context):
        g2m = binary(context, "gltf2msh")
        game = game_dir(context, self.game_dir).rstrip("/\\")
        if not game or not os.path.isdir(game):
            raise tools.ToolError(f"no game folder to restore ({game or 'none given'}): set "
                                  "Game folder")
        tmp = tempfile.mkdtemp(prefix="parkan_restore_")
        try:
            rep = os.path.join(tmp, "report.json")
            cmd = [g2m, "--restore", game, "--report", rep]
            if self.force:
                cmd.append("--force")
            code, err = tools.run(cmd, lambda l: print("parkan:", l))
            r = {}
            if os.path.isfile(rep):
                with open(rep, encoding="utf-8") as f:
                    r = json.load(f)
            if code != 0:
                raise tools.ToolError(r.get("error") or tools.last_error(err)
                                      or f"gltf2msh exited with {code}")
            rows = [x for x in r.get("files") or [] if isinstance(x, dict)]
            done = [f"{x.get('path')}: {x.get('done')}" for x in rows]
            if done:
                info = f"Restored {game}: " + "; ".join(done)
            else:
                info = f"Nothing to restore in {game}: no install kept an original there"
            reports.finish(self, context, info, [])
            return {"FINISHED"}
        finally:
            shutil.rmtree(tmp, ignore_errors=True)


def menu_export(self, context):
    self.layout.operator(PARKAN_OT_restore_game.bl_idname, text="Parkan: restore the game")
