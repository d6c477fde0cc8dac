"""Helpers of scripts/wine_smoke.sh.

  glbtool.py rename IN.glb OUT.glb PREFIX   materials, textures and images renamed PREFIX+name
                                            (their extras dropped): a new model's own
  glbtool.py same A B [--strip PREFIX]...   exit 0 when A and B are the same output:
      bytes equal, or two GLBs whose JSON is equal once every string has its
      backslashes made slashes and each PREFIX (either separator) removed
      (extras.msh.source holds the input path as given) and whose BIN chunks
      are equal; else prints the first difference and exits 1.
"""
import json
import struct
import sys


def read_glb(path):
    b = open(path, "rb").read()
    if b[:4] != b"glTF":
        return None, b
    n = struct.unpack_from("<I", b, 12)[0]
    doc = json.loads(b[20:20 + n])
    rest = b[20 + n:]
    return doc, rest


def write_glb(path, doc, rest):
    j = json.dumps(doc, separators=(",", ":")).encode()
    j += b" " * (-len(j) % 4)
    total = 12 + 8 + len(j) + len(rest)
    with open(path, "wb") as f:
        f.write(b"glTF" + struct.pack("<II", 2, total) + struct.pack("<I", len(j)) + b"JSON" + j + rest)


def norm(v, strip):
    if isinstance(v, str):
        s = v.replace("\\", "/")
        for p in strip:
            s = s.replace(p.replace("\\", "/"), "")
        return s
    if isinstance(v, list):
        return [norm(x, strip) for x in v]
    if isinstance(v, dict):
        return {k: norm(x, strip) for k, x in v.items()}
    return v


def first_diff(a, b, at="$"):
    if type(a) is not type(b):
        return f"{at}: {a!r} != {b!r}"
    if isinstance(a, dict):
        for k in sorted(set(a) | set(b)):
            if k not in a or k not in b:
                return f"{at}.{k}: only in one"
            d = first_diff(a[k], b[k], f"{at}.{k}")
            if d:
                return d
        return None
    if isinstance(a, list):
        if len(a) != len(b):
            return f"{at}: {len(a)} != {len(b)} items"
        for i, (x, y) in enumerate(zip(a, b)):
            d = first_diff(x, y, f"{at}[{i}]")
            if d:
                return d
        return None
    return None if a == b else f"{at}: {a!r} != {b!r}"


def main(argv):
    if argv[1] == "rename":
        doc, rest = read_glb(argv[2])
        for k in ("materials", "textures", "images"):
            for m in doc.get(k, []):
                m["name"] = argv[4] + m.get("name", k).split(".")[0]
                m.pop("extras", None)
        write_glb(argv[3], doc, rest)
        return 0
    a, b, strip = argv[2], argv[3], []
    i = 4
    while i + 1 < len(argv) and argv[i] == "--strip":
        strip.append(argv[i + 1])
        i += 2
    ba, bb = open(a, "rb").read(), open(b, "rb").read()
    if ba == bb:
        return 0
    (da, ra), (db, rb) = read_glb(a), read_glb(b)
    if da is None or db is None:
        print(f"{a} and {b} differ (not GLBs)")
        return 1
    d = first_diff(norm(da, strip), norm(db, strip))
    if d or ra != rb:
        print(f"{a} and {b} differ: {d or 'BIN chunk'}")
        return 1
    return 0


sys.exit(main(sys.argv))
