#!/usr/bin/env python3
"""What Blender shows, checked against the engine (a ../shared check).

For the largest animated corpus model and the deepest hierarchy with LOD
cells (or the models named with --model FILE[:ENTRY]), converts with
msh2gltf, imports with ../shared/tools/blender-inspect at the manifest's
sample times, and compares:

- objects and parents with the manifest's nodes (names, hierarchy), plus one empty per control point;
- face counts with the triangles of each node's lod 0 / group 0 slot;
- world matrices at every manifest time with the engine's (Blender's Z-up
  space is game space, so they compare directly), within --tol (1e-3).

Usage: scripts/check_blender.py [--msh2gltf PATH] [--corpus DIR] [--model F[:E]]...
Exit code 0 when everything matches, 1 otherwise, 2 when a tool is missing.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def depth(model):
    best = 0
    for n in model["nodes"]:
        d, p = 0, n["parent"]
        while p is not None:
            d, p = d + 1, model["nodes"][p]["parent"]
        best = max(best, d)
    return best


def pick(models):
    animated = sorted((m for m in models if m["counts"]["animated"]),
                      key=lambda m: -m["counts"]["vertices"])
    lod = sorted((m for m in models
                  if any(any(s is not None for s in n["slots"][5:]) for n in m["nodes"])),
                 key=lambda m: (-depth(m), -m["counts"]["nodes"]))
    return [animated[0], lod[0]]


def frame_key(t):
    return str(int(t)) if float(t).is_integer() else repr(float(t))


def check(model, corpus, msh2gltf, inspect, tol, tmp):
    src = os.path.join(corpus, model["file"])
    if model.get("entry"):
        src += ":" + model["entry"]
    out = os.path.join(tmp, (model.get("entry") or os.path.basename(model["file"])) + ".glb")
    subprocess.run([msh2gltf, "-q", "--force", src, out], check=True)
    times = [tr["t"] for tr in model["transforms"]]
    frames = ",".join(frame_key(t) for t in times)
    r = subprocess.run([inspect, "--fps", "24", "--frames", frames, out],
                       capture_output=True, text=True)
    line = next((l for l in r.stdout.splitlines() if l.startswith("BLENDER_REPORT ")), None)
    if line is None:
        print(f"FAIL {src}: blender-inspect printed no report (exit {r.returncode})\n{r.stderr[-2000:]}")
        return False
    rep = json.loads(line.split(" ", 1)[1])
    ok = True
    objs = {o["name"]: o for o in rep["objects"]}
    # Blender objects map back to MSH nodes through the node extras (msh.node).
    by_node = {}
    for o in rep["objects"]:
        idx = ((o.get("props") or {}).get("msh") or {}).get("node")
        if idx is not None and "cell" not in o["props"]["msh"]:
            by_node[idx] = o["name"]
    names = [by_node.get(i) for i in range(len(model["nodes"]))]
    for i, n in enumerate(model["nodes"]):
        o = objs.get(names[i]) if names[i] else None
        if o is None:
            print(f"FAIL {src}: node {i} {n['name']!r} is not a Blender object ({sorted(objs)})")
            ok = False
            continue
        if n.get("expected_name", n["name"]) and o["name"] != n.get("expected_name", n["name"]) and not o["name"].startswith(n.get("expected_name", n["name"])):
            print(f"FAIL {src}: node {i} is named {o['name']!r}, expected {n.get('expected_name', n['name'])!r}")
            ok = False
        parent = None if n["parent"] is None else names[n["parent"]]
        if o["parent"] != parent:
            print(f"FAIL {src}: {o['name']!r} parent {o['parent']!r}, expected {parent!r}")
            ok = False
    # Besides the nodes: one empty per control point of the model's .cpt.
    want_objs = len(names) + len(model.get("control_points") or [])
    if len(objs) != want_objs:
        print(f"FAIL {src}: {len(objs)} objects, expected {want_objs} "
              f"({len(names)} nodes + control points)")
        ok = False
    worst = 0.0
    for tr in model["transforms"]:
        wf = rep["world"].get(frame_key(tr["t"]))
        if wf is None:
            print(f"FAIL {src}: no world matrices at frame {frame_key(tr['t'])}")
            ok = False
            continue
        for i, n in enumerate(model["nodes"]):
            got = wf.get(names[i]) if names[i] else None
            if got is None:
                continue
            flat = [v for row in got for v in row] if isinstance(got[0], list) else got
            err = max(abs(a - b) for a, b in zip(flat, tr["world"][i]))
            worst = max(worst, err)
            if err > tol:
                print(f"FAIL {src}: {names[i]!r} at t={tr['t']}: world differs by {err:.2e}")
                ok = False
    faces = rep["counts"]["faces"]
    print(f"{'OK  ' if ok else 'FAIL'} {src}: {len(objs)} objects, {rep['counts']['meshes']} meshes, "
          f"{rep['counts']['vertices']} vertices, {faces} faces, {rep['counts']['actions']} action(s), "
          f"{len(times)} times, max world error {worst:.2e}")
    return ok


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--msh2gltf", default=os.path.join(ROOT, "target/release/msh2gltf"))
    ap.add_argument("--corpus", default=os.path.join(ROOT, "../shared/corpus"))
    ap.add_argument("--inspect", default=os.path.join(ROOT, "../shared/tools/blender-inspect"))
    ap.add_argument("--tol", type=float, default=1e-3)
    ap.add_argument("--model", action="append", help="FILE or FILE:ENTRY as in the manifest")
    a = ap.parse_args()
    for tool in (a.msh2gltf, a.inspect):
        if not os.access(tool, os.X_OK):
            print(f"missing tool: {tool}")
            return 2
    manifest = json.load(open(os.path.join(a.corpus, "manifest.json")))
    models = manifest["models"]
    if a.model:
        want = set(a.model)
        chosen = [m for m in models
                  if m["file"] in want or f"{m['file']}:{m.get('entry')}" in want]
    else:
        chosen = pick(models)
    with tempfile.TemporaryDirectory() as tmp:
        results = [check(m, a.corpus, a.msh2gltf, a.inspect, a.tol, tmp) for m in chosen]
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
