#!/usr/bin/env python3
"""Digest of everything the two tools produce from the shared corpus, to prove a
refactor changes no behaviour (issue 16: "corpus outputs byte-identical before and
after").

    scripts/corpus_digest.py [--quick] BIN_DIR OUT.json [--corpus DIR]
    scripts/corpus_digest.py --compare BEFORE.json AFTER.json

The first form runs BIN_DIR/msh2gltf and BIN_DIR/gltf2msh over ../shared/corpus
and records, for every run: its exit code, its stdout and stderr (paths and
timings normalised), the SHA-256 of every file it wrote and its JSON report
(timings removed). The runs cover:

- `--help`, `-h`, `--version` and two usage errors of each tool;
- `--list` of every archive;
- per model (every entry of every archive and every bare model; `--quick`: the
  first three entries of each archive): the default export, `--all-cells --up z
  --fps 30` as .gltf, `--state 1 --lod 1 --no-textures` (every third model),
  `gltf2msh --base` back (round trip), `gltf2msh` without a base (authoring a new
  model), and for a few models authoring with `--game-dir` (library copies),
  `--game-dir --in-place` (on a copy of the libraries) and `--into` an archive copy;
- every map: default, `--lod 1`, `--all-cells --areals`, and back with `--base`;
- every unit file: export, and `gltf2msh` of its export (refused);
- every file of `bad/` through `msh2gltf`;
- a batch: the whole corpus (`--quick`: units.rlb with `--textures-out`), the
  report rows sorted by source and their messages sorted (jobs run in parallel).

The second form prints `IDENTICAL` and exits 0, or lists each differing item
(exit 1). Runs are independent; two run at a time.
"""

import argparse
import concurrent.futures
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

TIME_RE = re.compile(r"\b\d+(\.\d+)?\s?(ms|s)\b")
TIME_KEYS = {"seconds", "time_ms", "ms", "elapsed"}


def sha(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


class Digest:
    """Runs commands inside one work folder and records normalised results."""

    def __init__(self, bins, corpus, work):
        self.bins, self.corpus, self.work = bins, corpus, work
        self.items = {}

    def norm(self, text):
        text = text.replace(self.work, "$W").replace(self.corpus, "$C").replace(self.bins, "$B")
        return TIME_RE.sub("<t>", text)

    def strip_times(self, v):
        if isinstance(v, dict):
            return {k: self.strip_times(x) for k, x in v.items() if k not in TIME_KEYS}
        if isinstance(v, list):
            return [self.strip_times(x) for x in v]
        if isinstance(v, str):
            return self.norm(v)
        return v

    def files_under(self, out):
        files = {}
        for root, _, names in os.walk(out):
            for n in sorted(names):
                p = os.path.join(root, n)
                rel = os.path.relpath(p, out)
                if n.endswith(".json"):
                    try:
                        doc = json.load(open(p))
                        if isinstance(doc, dict) and isinstance(doc.get("models"), list):
                            doc["models"].sort(key=lambda m: str(m.get("source")))
                        files[rel] = self.strip_times(doc)
                        continue
                    except ValueError:
                        pass
                files[rel] = sha(p)
        return files

    def run(self, key, tool, args, sort_lines=False, env=None):
        """Runs `tool args` with the item's own output folder $W/<key>/ as cwd."""
        out = os.path.join(self.work, re.sub(r"[^A-Za-z0-9_.-]", "_", key))
        os.makedirs(out, exist_ok=True)
        args = [a.replace("{out}", out) for a in args]
        p = subprocess.run([os.path.join(self.bins, tool)] + args, cwd=out,
                           capture_output=True, timeout=600, env=env)
        text = {}
        for name, data in (("stdout", p.stdout), ("stderr", p.stderr)):
            lines = self.norm(data.decode("utf-8", "replace")).splitlines()
            text[name] = sorted(lines) if sort_lines else lines
        self.items[key] = {"code": p.returncode, **text, "files": self.files_under(out)}
        return out


def archives(corpus):
    return sorted(n for n in os.listdir(corpus) if n.endswith(".rlb"))


def model_specs(d, quick):
    specs = []
    for a in archives(d.corpus):
        p = subprocess.run([os.path.join(d.bins, "msh2gltf"), "--list", os.path.join(d.corpus, a)],
                           capture_output=True)
        try:
            names = [m["name"] for m in json.loads(p.stdout)["models"]]
        except (ValueError, KeyError):
            continue
        specs += [(f"{a}:{n}", f"{d.corpus}/{a}:{n}") for n in (names[:3] if quick else names)]
    models = os.path.join(d.corpus, "models")
    for n in sorted(os.listdir(models)):
        specs.append((f"models/{n}", os.path.join(models, n)))
    return specs


def model_jobs(d, i, key, spec):
    """The runs of one model, in order (the later ones read the first one's GLB)."""
    glb = os.path.join(d.work, "glb", key.replace("/", "_").replace(":", "_") + ".glb")
    jobs = [("export " + key, "msh2gltf", [spec, glb])]
    jobs.append(("cells " + key, "msh2gltf", [spec, "{out}/m.gltf", "--all-cells", "--up", "z", "--fps", "30"]))
    if i % 3 == 0:
        jobs.append(("state " + key, "msh2gltf", [spec, "{out}/m.glb", "--state", "1", "--lod", "1", "--no-textures"]))
    archive = ":" in spec
    jobs.append(("back " + key, "gltf2msh", [glb, "--base", spec, "-o", "{out}/back." + ("rlb" if archive else "msh")]))
    jobs.append(("author " + key, "gltf2msh", [glb, "-o", "{out}/NEW.msh"]))
    return jobs


def library_jobs(d, keys):
    """Authoring into library copies, in place on a copy, and into an archive copy."""
    jobs = []
    for n, key in enumerate(keys):
        glb = os.path.join(d.work, "glb", key.replace("/", "_").replace(":", "_") + ".glb")
        game = os.path.join(d.work, f"game{n}")
        os.makedirs(game, exist_ok=True)
        for lib in ("Material.lib", "Textures.lib", "LightMap.lib"):
            shutil.copy(os.path.join(d.corpus, lib), game)
        jobs.append((f"gamedir {key}", "gltf2msh", [glb, "-o", "{out}/NEW.msh", "--game-dir", d.corpus]))
        jobs.append((f"gamedir-replace {key}", "gltf2msh", [glb, "-o", "{out}/NEW.msh", "--game-dir", d.corpus,
                                                            "--replace-entries", "--texture-bits", "32"]))
        jobs.append((f"inplace {key}", "gltf2msh", [glb, "-o", "{out}/NEW.msh", "--game-dir", game, "--in-place"]))
        jobs.append((f"inplace-replace {key}", "gltf2msh", [glb, "-o", "{out}/NEW.msh", "--game-dir", game,
                                                            "--in-place", "--replace-entries"]))
        jobs.append((f"into {key}", "gltf2msh", [glb, "--into", os.path.join(d.corpus, "units.rlb"),
                                                  "--name", f"NEW{n}", "-o", "{out}/units.rlb"]))
    return jobs


def assimp_jobs(d):
    """Authoring Debian's assimp glTF2 samples (textures included) into library copies."""
    root = "/usr/share/assimp/models/glTF2"
    jobs = []
    for dirpath, _, names in sorted(os.walk(root)):
        for n in sorted(names):
            if n.endswith((".gltf", ".glb")):
                src = os.path.join(dirpath, n)
                key = os.path.relpath(src, root)
                jobs.append((f"assimp {key}", "gltf2msh", [src, "-o", "{out}/NEW.msh", "--game-dir", d.corpus]))
    return jobs


def run_all(d, jobs, workers=2):
    with concurrent.futures.ThreadPoolExecutor(workers) as pool:
        for f in [pool.submit(d.run, *j) for j in jobs]:
            f.result()


def digest(bins, corpus, quick):
    work = tempfile.mkdtemp(prefix="corpus-digest-")
    d = Digest(os.path.abspath(bins), os.path.abspath(corpus), work)
    os.makedirs(os.path.join(work, "glb"))
    try:
        jobs = []
        for tool in ("msh2gltf", "gltf2msh"):
            for flag in ("--help", "-h", "--version", "--bogus"):
                jobs.append((f"{tool} {flag}", tool, [flag]))
        jobs.append(("msh2gltf noargs", "msh2gltf", []))
        jobs.append(("gltf2msh missing", "gltf2msh", ["{out}/none.glb"]))
        jobs += [(f"list {a}", "msh2gltf", ["--list", os.path.join(corpus, a)]) for a in archives(corpus)]
        for b in sorted(os.listdir(os.path.join(corpus, "bad"))):
            # An archive's models convert in parallel: its messages come in any order.
            jobs.append((f"bad {b}", "msh2gltf", [os.path.join(d.corpus, "bad", b), "{out}/x.glb"],
                         b.endswith(".rlb")))
        run_all(d, jobs)

        specs = model_specs(d, quick)
        firsts, rest = [], []
        for i, (key, spec) in enumerate(specs):
            js = model_jobs(d, i, key, spec)
            firsts.append(js[0])
            rest += js[1:]
        run_all(d, firsts)
        run_all(d, rest)
        picks = [k for k, _ in specs][:: max(1, len(specs) // (3 if quick else 12))]
        run_all(d, library_jobs(d, picks), workers=1)
        for n in range(len(picks)):
            d.items[f"game{n} after in-place"] = {"code": 0, "stdout": [], "stderr": [],
                                                  "files": d.files_under(os.path.join(work, f"game{n}"))}
        run_all(d, assimp_jobs(d))

        jobs = []
        maps = os.path.join(d.corpus, "MAPS")
        for m in sorted(os.listdir(maps)):
            land = os.path.join(maps, m, "Land.msh")
            glb = os.path.join(work, "glb", f"map_{m}.glb")
            d.run(f"map {m}", "msh2gltf", [land, glb])
            jobs.append((f"map {m} lod1", "msh2gltf", [land, "{out}/m.glb", "--lod", "1"]))
            jobs.append((f"map {m} cells", "msh2gltf", [land, "{out}/m.glb", "--all-cells", "--areals"]))
            jobs.append((f"map {m} back", "gltf2msh", [glb, "--base", land, "-o", "{out}/Land.msh"]))
        for root, _, names in sorted(os.walk(os.path.join(d.corpus, "UNITS"))):
            for n in sorted(names):
                unit = os.path.join(root, n)
                glb = os.path.join(work, "glb", f"unit_{n}.glb")
                d.run(f"unit {n}", "msh2gltf", [unit, glb])
                jobs.append((f"unit {n} back", "gltf2msh", [glb, "-o", "{out}/u.msh"]))
        run_all(d, jobs)

        if quick:
            d.run("batch", "msh2gltf", [os.path.join(d.corpus, "units.rlb"), "{out}/b", "--report",
                                        "{out}/report.json", "--textures-out", "{out}/tex", "-v"],
                  sort_lines=True)
        else:
            d.run("batch", "msh2gltf", [d.corpus, "{out}/b", "--jobs", "2", "--report", "{out}/report.json"],
                  sort_lines=True)
        return {"quick": quick, "items": d.items}
    finally:
        shutil.rmtree(work, ignore_errors=True)


def compare(a_path, b_path):
    a, b = json.load(open(a_path))["items"], json.load(open(b_path))["items"]
    diffs = []
    for k in sorted(set(a) | set(b)):
        if k not in a or k not in b:
            diffs.append(f"{k}: only in {'after' if k in b else 'before'}")
            continue
        for field in ("code", "stdout", "stderr", "files"):
            if a[k][field] != b[k][field]:
                diffs.append(f"{k}: {field} differs\n  before: {json.dumps(a[k][field])[:400]}\n"
                             f"  after:  {json.dumps(b[k][field])[:400]}")
    if diffs:
        print("\n".join(diffs))
        print(f"DIFFERENT: {len(diffs)} of {len(set(a) | set(b))} items")
        return 1
    files = sum(len(v["files"]) for v in a.values())
    print(f"IDENTICAL: {len(a)} runs, {files} output files")
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--compare", action="store_true")
    ap.add_argument("--corpus", default=os.path.join(os.path.dirname(__file__), "..", "..", "shared", "corpus"))
    ap.add_argument("a")
    ap.add_argument("b")
    o = ap.parse_args()
    if o.compare:
        sys.exit(compare(o.a, o.b))
    result = digest(o.a, os.path.abspath(o.corpus), o.quick)
    with open(o.b, "w") as f:
        json.dump(result, f, indent=0, sort_keys=True)
    print(f"{len(result['items'])} runs recorded in {o.b}")


if __name__ == "__main__":
    main()
