//! The house rules of ARCHITECTURE.md ("Layers"), checked on the source:
//! every `crate::…` path (and a top-level file's `super::…`) in `src/**.rs`
//! (without `src/bin/`, comments left out) is an edge from the top-level
//! module of the file to the top-level module it names. The test fails when
//! (a) two top-level modules reach each other (a cycle; the one declared
//! exception is the IR core, [`CORE`]) or (b) an edge goes from a layer to
//! the same or a higher one ([`LAYERS`], lowest first).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The layers, lowest first; the same list is in ARCHITECTURE.md. A
/// module may import only modules of lower layers (and itself).
const LAYERS: &[(&str, &[&str])] = &[
    ("foundation", &["nres", "limits", "output"]),
    ("source", &["source"]),
    ("core", CORE),
    ("gltf out", &["gltf_export"]),
    ("gltf in", &["gltf_import"]),
    ("run", &["run"]),
    ("model", &["convert"]),
    ("kinds", &["unit", "terrain"]),
    ("composed kinds", &["mission", "models"]),
    ("driver", &["batch"]),
    ("application", &["msh2gltf", "gltf2msh"]),
];

/// The IR core: its modules still import each other (anim ⇄ msh via
/// `msh::build`, convention ⇄ msh, convention ⇄ material), a knot left for
/// later; edges inside it are allowed, edges out of it obey the layers.
const CORE: &[&str] = &["anim", "msh", "convention", "material"];

type Edges = BTreeMap<String, BTreeMap<String, Vec<String>>>;

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir).unwrap().flatten().collect();
    entries.sort_by_key(|e| e.file_name());
    for e in entries {
        let p = e.path();
        if p.is_dir() {
            if p.file_name().is_some_and(|n| n != "bin") {
                rust_files(&p, out);
            }
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The module path of a file below `src/` (`terrain/batch.rs` →
/// `["terrain", "batch"]`, `unit/mod.rs` → `["unit"]`, `lib.rs` → `[]`).
fn module_of(rel: &Path) -> Vec<String> {
    let mut parts: Vec<String> = rel
        .with_extension("")
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if parts.last().is_some_and(|l| l == "mod" || l == "lib") {
        parts.pop();
    }
    parts
}

/// The source without `//` comments (doc links name modules freely).
fn code_of(text: &str) -> String {
    text.lines()
        .map(|l| match l.find("//") {
            Some(i) if !l[..i].contains('"') => &l[..i],
            _ => l,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The top-level modules a piece of code names: `crate::a…`,
/// `crate::{a, b::c}`, and `super::a…` when `depth` is 1 (a top-level
/// file, whose `super` is the crate).
fn named_modules(code: &str, depth: usize) -> Vec<String> {
    let mut found = Vec::new();
    let ident = |s: &str| -> String {
        s.chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect()
    };
    let mut prefixes = vec!["crate::"];
    if depth == 1 {
        prefixes.push("super::");
    }
    for prefix in prefixes {
        for (i, _) in code.match_indices(prefix) {
            let before = code[..i].chars().last();
            if before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':') {
                continue;
            }
            let rest = &code[i + prefix.len()..];
            if let Some(group) = rest.strip_prefix('{') {
                let body = &group[..group.find('}').unwrap_or(group.len())];
                for item in body.split(',') {
                    let name = ident(item.trim());
                    if !name.is_empty() && name != "self" {
                        found.push(name);
                    }
                }
            } else {
                let name = ident(rest);
                if !name.is_empty() {
                    found.push(name);
                }
            }
        }
    }
    found
}

/// Every edge between top-level modules, with the files that make it.
fn edges() -> Edges {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let top: BTreeSet<String> = files
        .iter()
        .filter_map(|f| module_of(f.strip_prefix(&src).unwrap()).first().cloned())
        .collect();
    let mut e: Edges = BTreeMap::new();
    for f in &files {
        let rel = f.strip_prefix(&src).unwrap();
        let m = module_of(rel);
        let Some(from) = m.first() else { continue };
        let code = code_of(&std::fs::read_to_string(f).unwrap());
        for to in named_modules(&code, m.len()) {
            if &to != from && top.contains(&to) {
                e.entry(from.clone())
                    .or_default()
                    .entry(to)
                    .or_default()
                    .push(rel.display().to_string());
            }
        }
    }
    e
}

fn layer_of(m: &str) -> Option<usize> {
    LAYERS.iter().position(|(_, ms)| ms.contains(&m))
}

/// (b): every edge that goes to the same layer or up (edges inside
/// [`CORE`] allowed), and every module missing from [`LAYERS`].
fn layer_violations(e: &Edges) -> Vec<String> {
    let mut bad = Vec::new();
    for (from, tos) in e {
        for (to, files) in tos {
            let (Some(a), Some(b)) = (layer_of(from), layer_of(to)) else {
                bad.push(format!("{from} -> {to}: a module missing from LAYERS"));
                continue;
            };
            let core = CORE.contains(&from.as_str()) && CORE.contains(&to.as_str());
            if b >= a && !core {
                let mut f = files.clone();
                f.dedup();
                bad.push(format!(
                    "{from} ({}) -> {to} ({}) in {}",
                    LAYERS[a].0,
                    LAYERS[b].0,
                    f.join(", ")
                ));
            }
        }
    }
    bad
}

/// (a): the strongly connected sets of more than one module (Tarjan).
fn cycles(e: &Edges) -> Vec<BTreeSet<String>> {
    struct T<'a> {
        e: &'a Edges,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on: BTreeSet<&'a str>,
        out: Vec<BTreeSet<String>>,
    }
    fn visit<'a>(t: &mut T<'a>, v: &'a str) {
        let i = t.index.len();
        t.index.insert(v, i);
        t.low.insert(v, i);
        t.stack.push(v);
        t.on.insert(v);
        let tos: Vec<&'a str> =
            t.e.get(v)
                .map(|m| m.keys().map(String::as_str).collect())
                .unwrap_or_default();
        for w in tos {
            if !t.index.contains_key(w) {
                visit(t, w);
                let l = t.low[w].min(t.low[v]);
                t.low.insert(v, l);
            } else if t.on.contains(w) {
                let l = t.index[w].min(t.low[v]);
                t.low.insert(v, l);
            }
        }
        if t.low[v] == t.index[v] {
            let mut set = BTreeSet::new();
            while let Some(w) = t.stack.pop() {
                t.on.remove(w);
                set.insert(w.to_string());
                if w == v {
                    break;
                }
            }
            if set.len() > 1 {
                t.out.push(set);
            }
        }
    }
    let mut t = T {
        e,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on: BTreeSet::new(),
        out: Vec::new(),
    };
    for v in e.keys() {
        if !t.index.contains_key(v.as_str()) {
            visit(&mut t, v);
        }
    }
    t.out
}

#[test]
fn layers_are_respected() {
    let bad = layer_violations(&edges());
    assert!(
        bad.is_empty(),
        "imports against the layers:\n{}",
        bad.join("\n")
    );
}

#[test]
fn no_cycle_outside_the_core() {
    let e = edges();
    // The parser sees the real imports (a broken one would pass vacuously).
    for (a, b) in [
        ("batch", "models"),
        ("mission", "terrain"),
        ("unit", "gltf_import"),
    ] {
        assert!(
            e.get(a).is_some_and(|t| t.contains_key(b)),
            "{a} -> {b} not seen"
        );
    }
    let core: BTreeSet<String> = CORE.iter().map(|s| s.to_string()).collect();
    for c in cycles(&e) {
        assert!(
            c.is_subset(&core),
            "top-level modules that import each other: {c:?}"
        );
    }
    // The content kinds and the driver: none of them reaches another's
    // batch code or the driver (issue 25 step 1).
    for kind in [
        "terrain", "mission", "unit", "models", "convert", "run", "source",
    ] {
        assert!(
            !e.get(kind).is_some_and(|t| t.contains_key("batch")),
            "{kind} imports the batch driver"
        );
    }
    assert!(!e.get("source").is_some_and(|t| t.contains_key("unit")));
    assert!(!e.get("gltf_import").is_some_and(|t| t.contains_key("unit")));
}

#[test]
fn the_checker_finds_a_cycle_and_an_upward_import() {
    // A synthetic graph: terrain -> batch and batch -> terrain.
    let mut e: Edges = BTreeMap::new();
    let mut add = |a: &str, b: &str| {
        e.entry(a.into())
            .or_default()
            .insert(b.into(), vec!["x.rs".into()]);
    };
    add("terrain", "batch");
    add("batch", "terrain");
    add("anim", "msh");
    add("msh", "anim");
    let c = cycles(&e);
    assert_eq!(c.len(), 2, "{c:?}");
    let bad = layer_violations(&e);
    assert_eq!(bad.len(), 1, "{bad:?}");
    assert!(bad[0].starts_with("terrain (kinds) -> batch (driver)"));
    assert_eq!(
        named_modules("use crate::{nres, source::x};\nlet a = crate::run::X;", 2),
        vec!["nres", "source", "run"]
    );
    assert_eq!(named_modules("use super::run;", 1), vec!["run"]);
    assert!(named_modules("use super::run;", 2).is_empty());
}
