"""One import run, in steps: `msh2gltf` into a temporary folder, then
Blender's glTF importer model by model.

`ImportJob.step()` does one unit of work and returns False when nothing is
left, so a script (or background Blender) loops it while the import
operator's modal handler calls it once per timer tick: the UI keeps
redrawing, shows the progress, and Esc calls `cancel()`, which stops the
converter (SIGTERM: it removes its temporary files) and keeps the models
imported so far. The stderr of the converter is read by a thread into a
list; only the main thread touches Blender data.
"""

import json
import os
import shutil
import subprocess
import tempfile
import threading
import time

import bpy

from . import clips
from . import images as shared_images
from . import layout
from . import scene as sc
from . import terrain
from . import tools


class Progress:
    """wm.progress_* (the number on the cursor) plus a status bar line; safe
    in background mode."""

    def __init__(self, context, total, what):
        self.wm = context.window_manager
        self.workspace = getattr(context, "workspace", None)
        self.total = max(int(total), 1)
        self.what = what
        self.done = 0
        self.wm.progress_begin(0, self.total)

    def step(self, n=1, text=""):
        self.done = min(self.done + n, self.total)
        self.wm.progress_update(self.done)
        if self.workspace is not None and text:
            self.workspace.status_text_set(f"Parkan {self.what}: {text}")

    def line(self, text):
        """A converter's stderr line as the status text (no step)."""
        self.step(0, text=text.strip()[:120])

    def end(self):
        self.wm.progress_end()
        if self.workspace is not None:
            self.workspace.status_text_set(None)


def model_materials(objects):
    """The materials of `objects` (their slots), each once, in order."""
    out = []
    for o in objects:
        for slot in getattr(o, "material_slots", []):
            if slot.material is not None and slot.material not in out:
                out.append(slot.material)
    return out


class ImportJob:
    """Converts `src` (a model, `ARCHIVE:ENTRY`, an archive or a folder;
    `what` = model/archive/folder, `total` models expected) with `args` (the
    converter options) and imports the results under the active collection.
    `settings`: fps, set_scene_fps, lightmaps, textures, state, lod, all_cells,
    layout (an archive's or folder's models side by side: `layout`).
    Images are shared between the models (`images.SharedImages`)."""

    def __init__(self, context, m2g, src, what, total, args, settings):
        self.src, self.what, self.total = src, what, max(int(total), 1)
        self.settings = settings
        self.tmp = tempfile.mkdtemp(prefix="parkan_import_")
        self.out = os.path.join(self.tmp, "model.glb" if what == "model" else "out")
        self.report_path = os.path.join(self.tmp, "report.json")
        self.cmd = [m2g, src, self.out, "--report", self.report_path] + list(args)
        if what == "folder":
            self.cmd += ["--jobs", str(max(1, (os.cpu_count() or 2) - 1))]
        self.progress = Progress(context, 2 * self.total, "import")
        self.proc = self.reader = None
        self.lines = []  # converter stderr lines (appended by the reader thread)
        self.seen = 0  # lines consumed
        self.converted = 0
        self.rows = None  # converted rows, once the converter is done
        self.failed, self.warnings = [], []
        self.next = 0
        self.top = None
        self.frame_end = self.n_obj = self.n_lm = self.n_models = self.n_missions = 0
        self.cancelled = False
        self.done = False
        self.images = shared_images.SharedImages()
        self.groups = {}  # group collection name -> (collection, [model collections]) to lay out
        self.laid_out = None  # models moved by the layout, once done
        self.staging = None  # the scene each model is read into (scene.Staging)

    # -- converter
    def start(self):
        self.proc = tools.start(self.cmd)
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self):
        for line in self.proc.stderr:
            line = line.rstrip("\n")
            print("parkan:", line)
            self.lines.append(line)

    def _consume_lines(self):
        while self.seen < len(self.lines):
            line = self.lines[self.seen]
            self.seen += 1
            if line.startswith(("converted ", "skipped ", "error")):
                self.converted += 1
                if self.converted <= self.total:
                    self.progress.step(text=f"converted {self.converted}/{self.total}")

    def _converter_done(self):
        code = self.proc.wait()
        self.reader.join(timeout=10)  # the converter's last lines
        self._consume_lines()
        if not os.path.isfile(self.report_path):
            err = "\n".join(self.lines)
            raise tools.ToolError(tools.last_error(err) or f"msh2gltf exited with {code}")
        with open(self.report_path, encoding="utf-8") as f:
            report = json.load(f)
        rows = sorted(report.get("models", []), key=lambda r: r.get("source", ""))
        self.rows = [r for r in rows if r.get("status") == "converted" and r.get("output")]
        self.failed = [r for r in rows if r.get("status") == "failed"]
        if not self.rows:
            msg = "; ".join(e for r in self.failed for e in r.get("errors", []))
            raise tools.ToolError(msg or tools.last_error("\n".join(self.lines)) or "no model converted")

    # -- the steps
    def step(self, context, block=False):
        """One unit of work; True while more is left. `block`: wait for the
        converter here instead of returning while it runs."""
        if self.done or self.cancelled:
            return False
        if self.proc is None:
            self.start()
            return True
        if self.rows is None:
            while block and self.proc.poll() is None:
                self._consume_lines()
                time.sleep(0.05)
            self._consume_lines()
            if self.proc.poll() is None:
                return True
            self._converter_done()
            self._begin_import(context)
            return True
        if self.next < len(self.rows):
            self._import_one(context, self.rows[self.next])
            self.next += 1
            return True
        self._finish(context)
        return False

    def cancel(self):
        """Stops the converter if it runs; the models imported so far stay."""
        self.cancelled = True
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def cleanup(self):
        """Ends the progress display and removes the temporary folder."""
        if self.proc is not None and self.proc.poll() is None:
            self.cancel()
        self.progress.end()
        if self.staging is not None:
            self.staging.remove()
        shutil.rmtree(self.tmp, ignore_errors=True)

    # -- Blender side
    def _begin_import(self, context):
        s, scene = self.settings, context.scene
        if s["set_scene_fps"]:
            scene.render.fps = max(1, int(round(s["fps"])))
            scene.render.fps_base = scene.render.fps / float(s["fps"])
        self.top = context.view_layer.active_layer_collection.collection
        if self.what != "model":
            if self.what == "folder":
                name = os.path.basename(os.path.normpath(self.src))
            else:
                name = os.path.splitext(os.path.basename(self.src))[0]
            self.top = sc.new_collection(name, self.top)
        self.staging = sc.Staging(scene)

    def _stem(self, glb):
        if self.what != "model":
            return os.path.splitext(os.path.basename(glb))[0]
        # The output is model.glb: name it after the entry or the file.
        src = self.src if os.path.exists(self.src) else self.src.rpartition(":")[2]
        return os.path.splitext(os.path.basename(src))[0]

    def _import_one(self, context, r):
        s, scene = self.settings, context.scene
        glb = r["output"]
        rel = os.path.relpath(os.path.dirname(glb), self.out) if self.what != "model" else "."
        parent = self.top if rel in (".", "") else sc.collection_for(rel.split(os.sep), self.top)
        coll = bpy.data.collections.new(self._stem(glb))
        try:
            new_objs, ex = self.staging.import_gltf(glb, coll)
        except RuntimeError as e:  # one broken file costs only that model
            self.staging.drop(coll)
            self.failed.append({"source": r.get("source"), "errors": [str(e).strip().splitlines()[-1]]})
            self.progress.step()
            return
        new_mats = model_materials(new_objs)
        self.staging.take(new_objs, coll, parent)
        if r.get("kind") == "mission":  # as File › Import › Parkan mission makes it
            self._settle_mission(context, r, coll, new_objs, new_mats, parent)
            return
        ex = sc.idprop_dict(ex) if ex is not None else {}
        if isinstance(ex, dict):
            scene["msh"] = ex  # the last model's extras, as Blender's importer leaves them
        # A unit (UNITS/<class>/*.dat): its collection records what units.py
        # records (its extras name a part, and Blender 3.4 keeps them as text).
        if str(r.get("source", "")).lower().endswith(".dat") or not isinstance(ex, dict):
            ex = {"source": r.get("source", ""), "unit": True}
        ex = dict(ex)
        ex.setdefault("source", r.get("source", ""))
        if r.get("kind") == "terrain":
            ex["terrain"] = True  # a map: its export goes without --game-dir
        coll["msh"] = ex
        # The game folder whose libraries gave the materials (gltf2msh
        # --base --game-dir writes material and texture edits against it).
        libs = r.get("libraries") or []
        coll["parkan_import"] = {"state": s["state"], "lod": s["lod"],
                                 "all_cells": s["all_cells"], "fps": float(s["fps"]),
                                 "game_dir": os.path.dirname(libs[0]) if libs else ""}
        doc = tools.gltf_json(glb)  # read once: lightmaps and clips
        if s["lightmaps"] and s["textures"]:
            want = tools.lightmap_materials(doc)
            for m in new_mats:
                base = m.name.rsplit(".", 1)[0] if m.name not in want else m.name
                if (m.name in want or base in want) and sc.wire_lightmap(m):
                    self.n_lm += 1
        terrain.wire_map(glb, new_objs, new_mats)
        # Clip actions on their NLA tracks; densified rotation keys hidden.
        clips.organize(new_objs, doc)
        clips.collapse_densified(new_objs, doc, scene.render.fps / scene.render.fps_base
                                 / max(float(s["fps"]), 1e-6))
        self.frame_end = max(self.frame_end, sc.activate_animations(new_objs))
        for o in new_objs:
            o.select_set(True)
        self.images.share(glb, new_mats, shared_images.material_images(new_mats))
        self._placed(r, coll, new_objs, parent)

    def _placed(self, r, coll, new_objs, parent):
        """The model, map or mission `coll` counted and queued for the
        layout: side by side with the rest (maps and missions too; an
        export takes the offsets out, layout.py)."""
        if self.what != "model":
            self.groups.setdefault(parent.name, (parent, []))[1].append(coll)
        self.n_obj += len(new_objs)
        self.n_models += 1
        self.progress.step(text=f"imported {self.n_models}/{len(self.rows)} (Esc: stop)")
        self.warnings += [f"{r.get('source')}: {w}" for w in r.get("warnings", [])]

    def _settle_mission(self, context, r, coll, new_objs, new_mats, parent):
        """A mission of the folder (`kind` "mission"): its collection made a
        mission (`missions.settle`: groups, clan colours, the record its
        File › Export › Parkan mission reads), named `Mission <folder>`
        as File › Import › Parkan mission names it."""
        from . import missions
        doc = tools.gltf_json(r["output"])
        s = (doc.get("scenes") or [{}])[doc.get("scene", 0)]
        mission_ex = (s.get("extras") or {}).get("parkan_mission") or {}
        tma = r.get("source", "")
        coll.name = f"Mission {os.path.basename(os.path.dirname(tma)) or coll.name}"
        missions.settle(context, coll, new_objs, tma, mission_ex)
        self.images.share(r["output"], new_mats, shared_images.material_images(new_mats))
        self.n_missions += 1
        self._placed(r, coll, new_objs, parent)

    def _finish(self, context):
        self.done = True
        self.settle(context)

    def settle(self, context):
        """Frame range and active collection for what was imported (also
        after a cancel)."""
        scene = context.scene
        if self.laid_out is None and self.settings.get("layout"):
            self.laid_out = self._lay_out(context)
        if self.frame_end > 0:
            scene.frame_start = 0
            scene.frame_end = self.frame_end
        if self.top is not None:
            sc.set_active_collection(context, self.top)

    def _lay_out(self, context):
        """The imported models side by side, group by group (`layout`),
        beside whatever else the scene holds; returns how many were moved."""
        context.view_layer.update()
        groups = [models for _parent, models in self.groups.values()]
        moved = {o for models in groups for c in models for o in c.all_objects}
        others = [o for o in context.scene.objects if o not in moved]
        n = layout.lay_out(groups, others)
        context.view_layer.update()
        return n

    def reports(self):
        """(level, text) pairs for the operator's report: warnings, failures
        (20 of each at most) and the summary line last."""
        out = [("WARNING", w) for w in self.warnings[:20]]
        out += [("WARNING", "failed: " + "; ".join(r.get("errors", []))) for r in self.failed[:20]]
        total = len(self.rows or [])
        stopped = f" (cancelled after {self.n_models} of {total})" if self.cancelled else ""
        missions = f" ({self.n_missions} of them missions)" if self.n_missions else ""
        out.append(("INFO", f"Imported {self.n_models} model(s){missions}{stopped}, {self.n_obj} objects, "
                            f"{self.n_lm} lightmapped material(s), {shared_images.count()} images "
                            f"({self.images.removed} duplicates shared); {len(self.failed)} failed, "
                            f"{len(self.warnings)} warning(s)"))
        return out
