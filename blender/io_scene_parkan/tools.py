"""The project's command-line converters, as seen from Blender.

Nothing here imports bpy: finding `msh2gltf`/`gltf2msh`, listing an
archive's models (`msh2gltf --list`), running a converter with progress
callbacks, and reading the glTF JSON of a .glb/.gltf. Errors are
`ToolError` with the converter's own message (it names the file, entry,
stream, record and rule).
"""

import json
import os
import shutil
import stat
import struct
import subprocess
import sys

ADDON_DIR = os.path.dirname(os.path.abspath(__file__))
EXE = ".exe" if sys.platform == "win32" else ""
# No console window flashing up for each converter run on Windows.
NO_WINDOW = {"creationflags": 0x08000000} if sys.platform == "win32" else {}


class ToolError(Exception):
    """A converter is missing, failed, or printed something unreadable."""


# Bounds of the text the add-on reads back as extras (`parse_text`; issue
# 36 item 11): Blender's glTF importer keeps a nested value it cannot store
# as an ID property as its Python text, and a crafted or broken file can
# make that text cost minutes or crash the reader. The corpus's largest is
# a few kB.
TEXT_LIMIT = 256 * 1024  # characters
DEPTH_LIMIT = 100  # nesting of [ { (
NUMBER_LIMIT = 64  # characters of one number (a 64-bit integer has 20 digits)


def text_bounds(text):
    """(deepest nesting of brackets, longest number) of JSON or Python
    literal `text`, strings skipped; one pass over the text."""
    depth = deepest = longest = run = 0
    quote = None
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if quote is not None:
            if ch == "\\":
                i += 1
            elif ch == quote:
                quote = None
        elif ch in "'\"":
            quote = ch
        elif ch in "[{(":
            depth += 1
            deepest = max(deepest, depth)
        elif ch in "]})":
            depth -= 1
        if quote is None and (ch.isalnum() or ch in "._") and (run or ch.isdigit()):
            run += 1
            longest = max(longest, run)
        else:
            run = 0
        i += 1
    return deepest, longest


def parse_text(v, what="a custom property"):
    """A custom property Blender kept as text (its importer stores
    `str(value)` when a nested value does not fit an ID property: an
    integer over 2**31 such as a marker or float bits, a list of mixed
    types) as the JSON value it was: JSON text first, then Python literal
    text. Anything else, or text neither reads, as it is.

    Bounded (TEXT_LIMIT characters, DEPTH_LIMIT deep, NUMBER_LIMIT
    characters a number): text over a bound raises ToolError naming `what`
    and the bound, before any parser sees it (Python's literal parser takes
    seconds a megabyte, its integer conversion refuses 4300 digits and both
    parsers recurse)."""
    if not isinstance(v, str):
        return v
    if len(v) > TEXT_LIMIT:
        raise ToolError(f"{what}: text of {len(v)} characters, over the {TEXT_LIMIT} the add-on "
                        "reads back as extras (rule addon.text_bounds)")
    depth, number = text_bounds(v)
    if depth > DEPTH_LIMIT:
        raise ToolError(f"{what}: text nested {depth} deep, over the {DEPTH_LIMIT} the add-on "
                        "reads back as extras (rule addon.text_bounds)")
    if number > NUMBER_LIMIT:
        raise ToolError(f"{what}: a number of {number} characters in its text, over the "
                        f"{NUMBER_LIMIT} the add-on reads back as extras (rule addon.text_bounds)")
    import ast
    for parse in (json.loads, ast.literal_eval):
        try:
            return parse(v)
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            continue
    return v


def popen(cmd, **kw):
    """`subprocess.Popen(cmd, **kw)` without a console window flashing up on
    Windows (`CREATE_NO_WINDOW`). Every process the add-on starts goes
    through here (`capture`, `start`)."""
    return subprocess.Popen(cmd, **NO_WINDOW, **kw)


def capture(cmd, timeout):
    """Runs `cmd` to its end through `popen`: a CompletedProcess with stdout
    and stderr as text. Raises OSError (cannot start) or
    subprocess.TimeoutExpired (the process is killed first)."""
    with popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, errors="replace") as p:
        try:
            out, err = p.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            p.kill()
            p.communicate()
            raise
    return subprocess.CompletedProcess(cmd, p.returncode, out, err)


class RunsTools:
    """Operator mixin: `execute` calls the operator's `run(context)`; a
    ToolError becomes an ERROR report (the converter's own message) and
    CANCELLED."""

    def execute(self, context):
        try:
            return self.run(context)
        except ToolError as e:
            self.report({"ERROR"}, str(e))
            return {"CANCELLED"}

    def report_warnings(self, context, warnings):
        """Each converter warning's text as a WARNING report (what gltf2msh
        did not write, and why), and a popup listing them when there are any
        (not in background mode, which has no window)."""
        for w in warnings:
            self.report({"WARNING"}, w)
        if warnings:
            show_popup(context, warnings)


def show_popup(context, warnings, limit=30):
    """A popup listing `warnings` (at most `limit` lines; the rest counted)."""
    try:
        import bpy
        if bpy.app.background:
            return
    except ImportError:
        return
    shown = warnings[:limit]

    def draw(menu, _context):
        for w in shown:
            menu.layout.label(text=w, icon="ERROR")
        if len(warnings) > limit:
            menu.layout.label(text=f"... and {len(warnings) - limit} more (see Info)")

    context.window_manager.popup_menu(draw, title=f"gltf2msh: {len(warnings)} warning(s)",
                                      icon="ERROR")


def report_warnings(report):
    """Every warning text of a gltf2msh `--report` JSON (the `import`
    object of an edit, the `author` object and its `library_warnings` of a
    new model), in order."""
    out = []
    for part in ("import", "author"):
        obj = report.get(part) or {}
        out += [str(w) for w in obj.get("warnings", []) or []]
        out += [str(w) for w in obj.get("library_warnings", []) or []]
    return out


def find_binary(name, pref_dir=""):
    """Path of `name` (msh2gltf or gltf2msh): the add-on preference folder,
    then `bin/` beside the add-on, then PATH. Bundled binaries lose their
    executable bit when Blender unpacks the add-on zip; it is restored here.
    """
    candidates = []
    if pref_dir:
        candidates.append(os.path.join(bpy_abspath(pref_dir), name + EXE))
    candidates.append(os.path.join(ADDON_DIR, "bin", name + EXE))
    for c in candidates:
        if os.path.isfile(c):
            if not os.access(c, os.X_OK):
                try:
                    os.chmod(c, os.stat(c).st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
                except OSError as e:
                    raise ToolError(f"{c} is not executable and cannot be made so: {e}")
            return c
    found = shutil.which(name)
    if found:
        return found
    where = ", ".join(candidates + ["PATH"])
    raise ToolError(f"{name} not found (looked in {where}); set its folder in the add-on preferences")


def bpy_abspath(p):
    """Blender's '//' relative paths, when bpy is there."""
    try:
        import bpy
        return bpy.path.abspath(p)
    except ImportError:
        return p


_help_cache = {}


def supports(binary, option):
    """True when `binary --help` mentions `option` (options differ between versions)."""
    if binary not in _help_cache:
        try:
            r = capture([binary, "--help"], timeout=30)
            _help_cache[binary] = r.stdout + r.stderr
        except (OSError, subprocess.SubprocessError):
            _help_cache[binary] = ""
    return option in _help_cache[binary]


def list_models(msh2gltf, path):
    """`msh2gltf --list PATH`: {"kind": "archive"|"model", "models": [{"name", "index", "bytes"}]}."""
    try:
        r = capture([msh2gltf, "--list", path], timeout=60)
    except (OSError, subprocess.SubprocessError) as e:
        raise ToolError(f"cannot run {msh2gltf}: {e}")
    if r.returncode != 0:
        raise ToolError(last_error(r.stderr) or f"msh2gltf --list exited with {r.returncode}")
    try:
        return json.loads(r.stdout)
    except ValueError:
        raise ToolError(f"msh2gltf --list printed no JSON: {r.stdout[:200]!r}")


def last_error(text):
    """The most useful line of a converter's stderr: its last `error` line, else its last line."""
    lines = [l.strip() for l in (text or "").splitlines() if l.strip()]
    errs = [l for l in lines if "error" in l.lower()]
    return (errs or lines or [""])[-1]


def consent_hint(message):
    """`message` with the export option that gives the consent gltf2msh
    asked for (an existing file, existing library entries)."""
    if "--replace-entries" in message:
        return message + " (tick 'Replace library entries' to replace them)"
    if "use --force" in message or "add --force" in message:
        return message + " (tick 'Replace existing file' to replace it)"
    return message


def start(cmd):
    """Starts a converter with its stderr as a text pipe (stdout discarded).
    A missing binary is a ToolError."""
    try:
        return popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                     text=True, errors="replace")
    except OSError as e:
        raise ToolError(f"cannot run {cmd[0]}: {e}")


def run(cmd, on_line=None):
    """Runs a converter; `on_line(line)` sees each stderr line as it comes.
    Returns (exit code, whole stderr). A missing binary is a ToolError."""
    # The converters report on stderr; stdout is not read (no pipe to fill up).
    p = start(cmd)
    err = []
    for line in p.stderr:
        err.append(line)
        if on_line is not None:
            on_line(line.rstrip("\n"))
    code = p.wait()
    return code, "".join(err)


def gltf_json(path):
    """The JSON part of a .glb or .gltf file."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:4] == b"glTF":
        if len(data) < 20:
            raise ToolError(f"{path}: truncated GLB")
        n, kind = struct.unpack_from("<II", data, 12)
        if kind != 0x4E4F534A:
            raise ToolError(f"{path}: the first GLB chunk is not JSON")
        return json.loads(data[20:20 + n].decode("utf-8"))
    return json.loads(data.decode("utf-8"))


JSON_CHUNK, BIN_CHUNK = 0x4E4F534A, 0x004E4942


def read_glb(path):
    """(json dict, bin bytes) of a GLB; ToolError when its JSON is unreadable."""
    with open(path, "rb") as f:
        data = f.read()
    n, kind = struct.unpack_from("<II", data, 12)
    if data[:4] != b"glTF" or kind != JSON_CHUNK:
        raise ValueError(f"{path}: not a GLB with a JSON chunk")
    try:
        doc = json.loads(data[20:20 + n].decode("utf-8"))
    except (ValueError, RecursionError) as e:  # UnicodeDecodeError, a 5000-digit number
        raise ToolError(f"{path}: its glTF JSON is unreadable ({str(e)[:200]})") from None
    rest = data[20 + n:]
    binary = b""
    if len(rest) >= 8:
        m, kind = struct.unpack_from("<II", rest, 0)
        if kind == BIN_CHUNK:
            binary = rest[8:8 + m]
    return doc, bytearray(binary)


def write_glb(path, doc, binary):
    """Writes `doc` (and `binary`, padded, as the BIN chunk when not empty)
    as a GLB at `path`."""
    try:
        j = json.dumps(doc, separators=(",", ":")).encode("utf-8")
    except (ValueError, RecursionError) as e:  # a 5000-digit integer, a cycle
        raise ToolError(f"{path}: cannot write its glTF JSON ({str(e)[:200]})") from None
    j += b" " * (-len(j) % 4)
    binary = bytes(binary) + b"\0" * (-len(binary) % 4)
    body = struct.pack("<II", len(j), JSON_CHUNK) + j
    if binary:
        body += struct.pack("<II", len(binary), BIN_CHUNK) + binary
    with open(path, "wb") as f:
        f.write(b"glTF" + struct.pack("<II", 2, 12 + len(body)) + body)


def lightmap_materials(doc):
    """{material name: lightmap name or ""} for glTF materials that carry a
    lightmap: an occlusionTexture read through TEXCOORD_1, or a "lightmap"
    extra (msh2gltf: extras {"msh": {"lightmap": NAME}})."""
    out = {}
    for i, m in enumerate(doc.get("materials", [])):
        name = m.get("name", f"material{i}")
        occ = m.get("occlusionTexture")
        ex = m.get("extras") or {}
        lm = ex.get("lightmap") or (ex.get("msh") or {}).get("lightmap")
        if (occ is not None and occ.get("texCoord", 0) == 1) or lm:
            out[name] = lm or ""
    return out
