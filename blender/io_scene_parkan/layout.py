"""Models of a folder or archive import laid out side by side (issue 24
item 6), not stacked at the origin.

Each model keeps its own transforms: the layout only sets the
`delta_location` of the model's root objects (Blender adds it on top of
the location, animated or not) and records the offset on the model's
collection as the custom property `parkan_layout` ([x, y, z], Blender
units). The export takes the offsets out while it runs (`park` /
`unpark`), so Blender's glTF exporter and the unkeyed-edit check see the
model where the game has it: a laid-out model that was not edited still
comes back byte for byte.

Placement (`lay_out`): the models of one group (the collection of an
archive, or of a folder of units) are packed in rows by their bounds (in
the XY plane at the current frame), a gap of a tenth of the group's
largest model between them, rows about as wide as the group is deep; the
groups are packed in rows the same way. The whole grid starts beside
(+X of) everything else in the scene (earlier imports). Maps and missions
of a folder are laid out as the models are (each its own model: its
collection's roots offset), so none sits on another at the origin; the
model and mission exports both take the offsets out (`park`).
"""

import math

from mathutils import Vector

PROP = "parkan_layout"


def roots(coll):
    """The objects of `coll` (and its children) whose parent is not in it."""
    objs = set(coll.all_objects)
    return [o for o in objs if o.parent is None or o.parent not in objs]


def bounds(objects):
    """(min, max) Vectors of the world bounding boxes of `objects` (the
    origin of an object without geometry), None when there are none."""
    lo = Vector((math.inf,) * 3)
    hi = Vector((-math.inf,) * 3)
    for o in objects:
        corners = [o.matrix_world @ Vector(c) for c in o.bound_box] if o.type == "MESH" \
            else [o.matrix_world.translation]
        for p in corners:
            for i in range(3):
                lo[i] = min(lo[i], p[i])
                hi[i] = max(hi[i], p[i])
    return (lo, hi) if lo.x <= hi.x else None


def pack_rows(sizes, gap):
    """Min corners [(x, y)] for boxes of `sizes` [(w, d)] put in rows left
    to right, the rows stacked along +Y, each row at most about as wide
    as the packing is deep (the square root of the boxes' total area, and
    at least the widest box)."""
    area = sum((w + gap) * (d + gap) for w, d in sizes)
    width = max([math.sqrt(area)] + [w for w, _ in sizes])
    out, x, y, row = [], 0.0, 0.0, 0.0
    for w, d in sizes:
        if x > 0 and x + w > width:
            x, y, row = 0.0, y + row + gap, 0.0
        out.append((x, y))
        x += w + gap
        row = max(row, d)
    return out


def _gap(boxes):
    big = max((max(hi.x - lo.x, hi.y - lo.y) for lo, hi in boxes), default=1.0)
    return max(0.5, 0.1 * big)


def set_offset(coll, offset):
    """Moves the model of `coll` by `offset` (delta_location of its roots)."""
    coll[PROP] = list(offset)
    for o in roots(coll):
        o.delta_location = offset


def lay_out(groups, others):
    """Lays out `groups` ([[model collection, ...], ...], in order) beside
    the objects `others` (left where they are). Returns the number of
    models moved."""
    placed = []  # per group: [(coll, lo, hi)], the group's (w, d)
    for models in groups:
        items = [(c, bounds(c.all_objects)) for c in models]
        items = [(c, b[0], b[1]) for c, b in items if b is not None]
        if not items:
            continue
        gap = _gap([(lo, hi) for _, lo, hi in items])
        corners = pack_rows([(hi.x - lo.x, hi.y - lo.y) for _, lo, hi in items], gap)
        cells = [(c, Vector((x - lo.x, y - lo.y, 0.0)), lo, hi)
                 for (c, lo, hi), (x, y) in zip(items, corners)]
        w = max(x + (hi.x - lo.x) for (x, _), (_, lo, hi) in zip(corners, items))
        d = max(y + (hi.y - lo.y) for (_, y), (_, lo, hi) in zip(corners, items))
        placed.append((cells, w, d))
    if not placed:
        return 0
    outside = bounds(others)
    gap = _gap([(Vector((0, 0, 0)), Vector((w, d, 0))) for _, w, d in placed])
    x0 = outside[1].x + gap if outside is not None else 0.0
    y0 = outside[0].y if outside is not None else 0.0
    n = 0
    for (cells, _w, _d), (gx, gy) in zip(placed, pack_rows([(w, d) for _, w, d in placed], gap)):
        for c, off, _lo, _hi in cells:
            set_offset(c, off + Vector((x0 + gx, y0 + gy, 0.0)))
            n += 1
    return n


def park(collections):
    """Takes the layout offsets out of the models in `collections` (for an
    export); returns what `unpark` puts back."""
    saved = []
    for c in collections:
        if PROP not in c.keys():
            continue
        for o in roots(c):
            saved.append((o, o.delta_location.copy()))
            o.delta_location = (0.0, 0.0, 0.0)
    return saved


def unpark(saved):
    for o, d in saved:
        o.delta_location = d
