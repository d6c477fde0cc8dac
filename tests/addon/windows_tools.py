"""The add-on's converter plumbing as on Windows, without Blender (tools.py
imports no bpy): with sys.platform faked to "win32", the bundled binaries
are found in bin/ as .exe, and every process is started with
CREATE_NO_WINDOW (0x08000000) through tools.popen. Run by
tests/addon_windows.rs: python3 windows_tools.py ADDON_DIR TMP."""
import importlib.util
import os
import shutil
import subprocess
import sys

addon, tmp = sys.argv[1], sys.argv[2]
pkg = os.path.join(tmp, "io_scene_parkan")
shutil.copytree(addon, pkg, ignore=shutil.ignore_patterns("__pycache__"))
os.makedirs(os.path.join(pkg, "bin"))
for name in ("msh2gltf", "gltf2msh"):
    with open(os.path.join(pkg, "bin", name + ".exe"), "wb") as f:
        f.write(b"MZ")

real_platform = sys.platform
sys.platform = "win32"
spec = importlib.util.spec_from_file_location("parkan_tools", os.path.join(pkg, "tools.py"))
tools = importlib.util.module_from_spec(spec)
spec.loader.exec_module(tools)
sys.platform = real_platform

assert tools.EXE == ".exe", tools.EXE
for name in ("msh2gltf", "gltf2msh"):
    found = tools.find_binary(name)
    assert found == os.path.join(pkg, "bin", name + ".exe"), found

# Every start goes through Popen with CREATE_NO_WINDOW: record the calls.
seen = []


class FakePopen:
    def __init__(self, cmd, **kw):
        seen.append((cmd, kw))
        self.returncode = 0
        self.stderr = iter(())

    def communicate(self, timeout=None):
        return ('{"kind": "archive", "models": []}', "")

    def __enter__(self):
        return self

    def __exit__(self, *a):
        return False

    def wait(self, timeout=None):
        return 0

    def poll(self):
        return 0


subprocess.Popen = FakePopen
tools.supports("msh2gltf.exe", "--list")
assert tools.list_models("msh2gltf.exe", "C:\\Program Files (x86)\\Parkan\\Моды\\units.rlb")["kind"] == "archive"
tools.start(["gltf2msh.exe", "x.glb"])
assert len(seen) == 3, seen
for cmd, kw in seen:
    assert kw.get("creationflags") == 0x08000000, (cmd, kw)
assert seen[1][0][2] == "C:\\Program Files (x86)\\Parkan\\Моды\\units.rlb", seen[1]
print("WINDOWS_TOOLS_OK", len(seen))
