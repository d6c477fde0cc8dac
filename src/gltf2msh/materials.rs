//! `--base … --game-dir GAME`: the material and texture edits of a glTF
//! written into the game's libraries (issue 23; format-notes §4, §6 R8–R10),
//! by the run's one transaction: copies of `Material.lib` / `Textures.lib`
//! beside the output, or the game's own with `--in-place` (locked from read
//! to commit).
//!
//! Per material msh2gltf exported (`extras.msh.exported`,
//! [`material_edits`]): a colour, opacity or `alphaMode` edit rewrites the
//! MAT0 entry of its WEAR name in place ([`rewrite::edit_mat0`]); a base
//! colour image whose pixels differ from its library entry's mip 0 (as the
//! game would show them, [`retexture::same_pixels`]) re-encodes that Texm
//! entry in its own format ([`retexture::reencode`]); a material pointed at
//! another image uses the library entry of that name when its pixels are
//! the same, replaces it with `--replace-entries`, else becomes a new entry
//! named as authoring names them. Every other entry keeps its bytes. Other
//! models of the game folder whose WEAR names an edited material (or a
//! material naming an edited texture) are listed in a warning.

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::path::{Path, PathBuf};

use image::RgbaImage;

use super::{claim, conversion, output_fail, read_input, usage, Args, RunError};
use crate::convention::TexmOrder;
use crate::gltf_import::material_edits::{self, MaterialEdit};
use crate::gltf_import::materials::{self as gm, TextureOptions};
use crate::gltf_import::GltfFile;
use crate::material::library::{Library, DEFAULT_MATERIAL, MATERIAL_LIB, TEXTURES_LIB};
use crate::material::rewrite::{self, Mat0Change, Replacement};
use crate::material::texm::ChannelOrder;
use crate::material::write::{texture_name, NewEntry};
use crate::material::{retexture, Wear, TYPE_MAT0, TYPE_TEXM};
use crate::output::{self, Transaction};
use crate::source::file_any_case;
use crate::{nres, source};

/// One library as read for the edit: where it is and its bytes.
struct Lib {
    /// The game's file (`None`: the game has none).
    src: Option<PathBuf>,
    /// Its bytes (read under the lock with `--in-place`).
    lib: Option<Library>,
}

/// What the edit wrote, for the summary and the report.
#[derive(Debug, Default, serde::Serialize)]
pub(super) struct LibraryEdits {
    /// MAT0 entries rewritten: name → what changed.
    pub materials: BTreeMap<String, Vec<String>>,
    /// Texm entries re-encoded in their own format: name → format code.
    pub textures: BTreeMap<String, u32>,
    /// New Texm entries (a material pointed at a new image).
    pub new_textures: Vec<String>,
    /// Library files written.
    pub written: Vec<PathBuf>,
    /// Other models of the game folder using an edited material or texture.
    pub shared: BTreeMap<String, Vec<String>>,
    /// Notes on what was approximated.
    pub warnings: Vec<String>,
}

impl LibraryEdits {
    /// True when nothing was written.
    pub fn is_empty(&self) -> bool {
        self.materials.is_empty() && self.textures.is_empty() && self.new_textures.is_empty()
    }

    /// One line for the summary.
    pub fn summary(&self) -> String {
        let mut s = Vec::new();
        if !self.materials.is_empty() {
            s.push(format!(
                "materials {:?}",
                self.materials.keys().collect::<Vec<_>>()
            ));
        }
        if !self.textures.is_empty() {
            s.push(format!(
                "textures {:?}",
                self.textures.keys().collect::<Vec<_>>()
            ));
        }
        if !self.new_textures.is_empty() {
            s.push(format!("new textures {:?}", self.new_textures));
        }
        s.join(", ")
    }
}

fn order(cli: &Args) -> TexmOrder {
    if cli.texm_order == "argb" {
        TexmOrder::Argb
    } else {
        TexmOrder::Retail
    }
}

/// Opens the game's `file`: for update (locked) with `--in-place`, else
/// as an input.
fn open(cli: &Args, game: &Path, file: &str, txn: &mut Transaction) -> Result<Lib, RunError> {
    let src = file_any_case(game, file);
    let bytes = if cli.in_place {
        let t = src.clone().unwrap_or_else(|| game.join(file));
        txn.open_for_update(&t).map_err(|e| match e {
            e @ (output::OutputError::IsInput(_) | output::OutputError::Collision(..)) => {
                usage(format!("--in-place {file}: {e}"))
            }
            e => output_fail(e),
        })?
    } else {
        match &src {
            Some(p) => {
                txn.add_input(p);
                Some(read_input(p, "library")?)
            }
            None => None,
        }
    };
    let lib = match bytes {
        Some(b) => {
            let label = src
                .as_ref()
                .map_or_else(|| file.to_string(), |p| p.display().to_string());
            Some(Library::from_bytes(&label, b).map_err(|e| conversion(e.to_string()))?)
        }
        None => None,
    };
    Ok(Lib { src, lib })
}

/// Stages the new bytes of the game's `file`: the game's own with
/// `--in-place`, else a copy in the output's folder.
fn stage(
    cli: &Args,
    game: &Path,
    file: &str,
    src: Option<&Path>,
    out: &Path,
    txn: &mut Transaction,
    bytes: Vec<u8>,
) -> Result<PathBuf, RunError> {
    let target = if cli.in_place {
        src.map_or_else(|| game.join(file), Path::to_path_buf)
    } else {
        let dir = match out.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let t = file_any_case(&dir, file).unwrap_or_else(|| dir.join(file));
        if src.is_some_and(|s| output::same_file(s, &t)) {
            return Err(usage(format!(
                "the edited {file} would replace {} in the game folder: add --in-place, or write the model to another folder with -o",
                t.display()
            )));
        }
        claim(txn, &t, " (write the model to another folder with -o)")?;
        t
    };
    txn.stage(&target, bytes).map_err(output_fail)?;
    Ok(target)
}

/// The Textures.lib entry a glTF image name stands for: the entry of that
/// name, else one whose name compares equal as material edits compare
/// texture names (Blender drops `.0`, adds `.001`).
fn find_texture(lib: &Library, name: &str) -> Option<usize> {
    lib.find(name).or_else(|| {
        let n = material_edits::norm_texture(name);
        (0..lib.len()).find(|&i| material_edits::norm_texture(&lib.name(i)) == n)
    })
}

/// The pending library changes, built material by material.
struct Pending<'a> {
    cli: &'a Args,
    doc: &'a GltfFile,
    order: ChannelOrder,
    topts: TextureOptions,
    mats: &'a Library,
    texs: Option<&'a Library>,
    mat_rep: BTreeMap<usize, Replacement>,
    tex_rep: BTreeMap<usize, Replacement>,
    new_tex: Vec<NewEntry>,
    /// glTF image → the texture name it was written as.
    images: BTreeMap<usize, String>,
    rep: LibraryEdits,
}

impl Pending<'_> {
    fn image(&self, i: usize) -> Result<RgbaImage, RunError> {
        gm::decode_image(self.doc, self.cli.input.parent(), i, &self.topts)
            .map_err(|e| conversion(format!("{}: {e}", self.cli.input.display())))
    }

    /// Re-encodes Texm entry `t` with glTF image `i` when its pixels differ.
    fn retexture(
        &mut self,
        lib: &Library,
        t: usize,
        i: usize,
        img: &RgbaImage,
    ) -> Result<bool, RunError> {
        let data = lib.data(t);
        let name = lib.name(t);
        let tex_err = |e: crate::material::MaterialError| {
            conversion(format!("{} entry {name:?}: {e}", lib.label()))
        };
        if retexture::same_pixels(data, img, &self.order).map_err(tex_err)? {
            return Ok(false);
        }
        let img = pow2(img, self.cli.max_texture);
        let r = retexture::reencode(data, &img, &self.order).map_err(tex_err)?;
        for w in r.warnings {
            self.rep.warnings.push(format!("texture {name}: {w}"));
        }
        if r.new_palette {
            self.rep.warnings.push(format!(
                "texture {name}: the edit has more new colours than its palette had free slots: a new 256-colour palette was made (median cut)"
            ));
        }
        let code = crate::material::Texm::parse(&r.data)
            .map(|x| x.format.code())
            .unwrap_or(0);
        self.tex_rep.insert(
            t,
            Replacement {
                index: t,
                attr1: lib.entries()[t].attr1,
                data: r.data,
            },
        );
        self.rep.textures.insert(name, code);
        self.images.insert(i, lib.name(t));
        Ok(true)
    }

    /// The texture name material `e` now names, with the Texm change it
    /// needs (a pixel edit of its entry, a replaced or a new entry).
    fn texture(&mut self, e: &MaterialEdit) -> Result<Option<Option<Vec<u8>>>, RunError> {
        let Some(i) = e.image else {
            return Ok(e.texture.as_ref().map(|_| None));
        };
        if let Some(done) = self.images.get(&i) {
            let same = e.exported_texture.as_deref() == Some(done.as_str());
            return Ok((!same).then(|| Some(done.as_bytes().to_vec())));
        }
        let Some(texs) = self.texs else {
            return Err(usage(format!(
                "material {:?}: a texture edit needs the game's {TEXTURES_LIB}, which --game-dir does not hold",
                e.gltf_name
            )));
        };
        let img = self.image(i)?;
        let renamed = e.texture.is_some();
        let want = match &e.texture {
            Some(Some(n)) => n.clone(),
            Some(None) => return Ok(Some(None)),
            None => e.exported_texture.clone().unwrap_or_default(),
        };
        match find_texture(texs, &want) {
            Some(t) => {
                let same = retexture::same_pixels(texs.data(t), &img, &self.order).unwrap_or(false);
                if renamed && !same && !self.cli.replace_entries {
                    return Err(usage(format!(
                        "material {:?} names image {want:?}, whose pixels differ from {} entry {:?}; rename the image, or give --replace-entries to replace that entry (other models may use it)",
                        e.gltf_name,
                        texs.label(),
                        texs.name(t)
                    )));
                }
                self.retexture(texs, t, i, &img)?;
                self.images.insert(i, texs.name(t));
                Ok(renamed.then(|| Some(texs.name(t).into_bytes())))
            }
            // The exported texture is not in the game's library (the model
            // was exported with other libraries): nothing to compare with.
            None if !renamed => {
                self.rep.warnings.push(format!(
                    "material {:?}: texture {want:?} is not in {}: its image is not compared",
                    e.gltf_name,
                    texs.label()
                ));
                Ok(None)
            }
            None => {
                let mut used = HashSet::new();
                let name = texture_name(&want, &mut used);
                let nt = gm::texture_from_image(
                    self.doc,
                    self.cli.input.parent(),
                    i,
                    name.clone(),
                    &self.topts,
                )
                .map_err(|e| conversion(format!("{}: {e}", self.cli.input.display())))?;
                self.new_tex.push(NewEntry {
                    name: name.clone().into_bytes(),
                    type_id: TYPE_TEXM,
                    attr1: 0,
                    attr2: 0,
                    attr3: 0,
                    data: nt.texm,
                });
                self.rep.new_textures.push(name.clone());
                self.images.insert(i, name.clone());
                Ok(Some(Some(name.into_bytes())))
            }
        }
    }

    /// Material `e`: its MAT0 change (colour, opacity, blend, texture).
    fn material(&mut self, e: &MaterialEdit) -> Result<(), RunError> {
        let texture = self.texture(e)?;
        if e.changes.is_empty() && texture.is_none() {
            return Ok(());
        }
        let Some(name) = &e.name else {
            return Err(conversion(format!(
                "material {} {:?}: edited, but its extras name no WEAR row (extras.msh.name)",
                e.index, e.gltf_name
            )));
        };
        let Some(m) = self.mats.find(name) else {
            return Err(usage(format!(
                "material {:?}: {} has no entry {name:?} (the game draws it with DEFAULT): author the model anew to give it a material",
                e.gltf_name,
                self.mats.label()
            )));
        };
        let entry = &self.mats.entries()[m];
        let attr1 = e.alpha_mode.as_deref().map(|a| gm::blend_mode(Some(a)));
        let change = Mat0Change {
            color: e.color,
            opacity: e.opacity,
            attr1,
            texture,
        };
        let base = self
            .mat_rep
            .get(&m)
            .map_or_else(|| self.mats.data(m).to_vec(), |r| r.data.clone());
        let (data, notes) = rewrite::edit_mat0(&base, entry.attr2, &change)
            .map_err(|x| conversion(format!("{} entry {name:?}: {x}", self.mats.label())))?;
        for n in notes {
            self.rep.warnings.push(format!("material {name}: {n}"));
        }
        if let Some(prev) = self.mat_rep.get(&m) {
            // Two glTF materials of one entry (a lit and an unlit variant).
            if data != prev.data || attr1.is_some_and(|a| a != prev.attr1) {
                self.rep.warnings.push(format!(
                    "material {name}: glTF material {} {:?} (another variant of the entry) is edited differently from the one before it: its values are written over them",
                    e.index, e.gltf_name
                ));
            }
        }
        let old_attr1 = self.mat_rep.get(&m).map_or(entry.attr1, |r| r.attr1);
        self.mat_rep.insert(
            m,
            Replacement {
                index: m,
                attr1: attr1.unwrap_or(old_attr1),
                data,
            },
        );
        let mut what = e.changes.clone();
        if e.texture.is_none() && change.texture.is_none() {
            what.retain(|c| !c.starts_with("texture"));
        }
        self.rep
            .materials
            .entry(self.mats.name(m))
            .or_default()
            .extend(what);
        Ok(())
    }
}

/// `img` resized to power-of-two sides (as authoring does) when a side is
/// not one; else itself.
fn pow2(img: &RgbaImage, max: u32) -> RgbaImage {
    let (w, h) = img.dimensions();
    if w.is_power_of_two() && h.is_power_of_two() && w.max(h) <= max {
        return img.clone();
    }
    let max = max.max(1).next_power_of_two();
    let (tw, th) = (gm::pow2(w, max), gm::pow2(h, max));
    image::imageops::resize(img, tw, th, image::imageops::FilterType::Triangle)
}

/// Writes the material and texture edits of `doc` (see the module docs)
/// and returns what was written. `base_archive` and `base_entry` name the
/// edited model (left out of the shared-use list).
///
/// # Errors
/// [`RunError::Usage`] for a library that cannot be opened or written, a
/// texture name collision without `--replace-entries`, a material missing
/// from `Material.lib`; [`RunError::Conversion`] for an image that does not
/// decode or a library entry that does not parse.
pub(super) fn write(
    cli: &Args,
    game: &Path,
    doc: &GltfFile,
    out: &Path,
    base: (&Path, Option<&str>),
    txn: &mut Transaction,
) -> Result<LibraryEdits, RunError> {
    if !game.is_dir() {
        return Err(usage(format!(
            "--game-dir {}: not a folder",
            game.display()
        )));
    }
    let mats = material_edits::exported_materials(doc);
    let mlib = open(cli, game, MATERIAL_LIB, txn)?;
    let tlib = open(cli, game, TEXTURES_LIB, txn)?;
    let Some(mat_lib) = &mlib.lib else {
        if mats.iter().any(|e| !e.changes.is_empty()) {
            return Err(usage(format!(
                "--game-dir {}: no {MATERIAL_LIB} to write the material edits into",
                game.display()
            )));
        }
        return Ok(LibraryEdits::default());
    };
    let order = order(cli);
    let mut p = Pending {
        cli,
        doc,
        order: order.channel_order(),
        topts: TextureOptions {
            max_size: cli.max_texture,
            order,
            max_work: cli.max_work,
            allow_outside: cli.allow_outside,
            ..TextureOptions::default()
        },
        mats: mat_lib,
        texs: tlib.lib.as_ref(),
        mat_rep: BTreeMap::new(),
        tex_rep: BTreeMap::new(),
        new_tex: Vec::new(),
        images: BTreeMap::new(),
        rep: LibraryEdits::default(),
    };
    for e in &mats {
        p.material(e)?;
    }
    let Pending {
        mat_rep,
        tex_rep,
        new_tex,
        mut rep,
        ..
    } = p;
    if !mat_rep.is_empty() {
        let reps: Vec<Replacement> = mat_rep.into_values().collect();
        let bytes = rewrite::replace_entries(mat_lib.label(), mat_lib.bytes(), &reps, &[])
            .map_err(|e| usage(e.to_string()))?;
        let t = stage(
            cli,
            game,
            MATERIAL_LIB,
            mlib.src.as_deref(),
            out,
            txn,
            bytes,
        )?;
        rep.written.push(t);
    }
    if !tex_rep.is_empty() || !new_tex.is_empty() {
        let reps: Vec<Replacement> = tex_rep.into_values().collect();
        let bytes = match &tlib.lib {
            Some(l) => rewrite::replace_entries(l.label(), l.bytes(), &reps, &new_tex),
            None => crate::material::write::add_entries(TEXTURES_LIB, None, &new_tex, false)
                .map(|(b, _)| b),
        }
        .map_err(|e| usage(e.to_string()))?;
        let t = stage(
            cli,
            game,
            TEXTURES_LIB,
            tlib.src.as_deref(),
            out,
            txn,
            bytes,
        )?;
        rep.written.push(t);
    }
    shared_use(game, mat_lib, base, &mut rep);
    Ok(rep)
}

/// Lists, per edited material and texture, the other models of the game
/// folder (`*.rlb` archives at its top level) that draw the material, or a
/// material whose phases name the texture; a WEAR row draws the entry the
/// game resolves it to ([`Library::drawn_for`], format-notes §4: its own,
/// else `DEFAULT`, else entry 0), so a repainted `DEFTEX.0` names every
/// model drawn through the `DEFAULT` fallback (issue 36 item 10). Each
/// non-empty list is also a warning, saying how many draw it through the
/// fallback.
fn shared_use(game: &Path, mats: &Library, base: (&Path, Option<&str>), rep: &mut LibraryEdits) {
    let mut watch: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for m in rep.materials.keys() {
        watch
            .entry(m.to_ascii_uppercase())
            .or_default()
            .insert(format!("material {m}"));
    }
    for t in rep.textures.keys() {
        for i in 0..mats.len() {
            if mats.entries()[i].type_id != TYPE_MAT0 {
                continue;
            }
            let Ok(m) = mats.mat0(i) else { continue };
            if m.phases
                .iter()
                .any(|ph| ph.texture().is_some_and(|n| n.eq_ignore_ascii_case(t)))
            {
                watch
                    .entry(mats.name(i).to_ascii_uppercase())
                    .or_default()
                    .insert(format!("texture {t}"));
            }
        }
    }
    if watch.is_empty() {
        return;
    }
    let mut users: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    // Of `users`, the models that draw it through the fallback; the drawn
    // entry (upper case) and whether it is a fallback, per WEAR name.
    let mut by_fallback: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut drawn: BTreeMap<String, (String, bool)> = BTreeMap::new();
    let mut files: Vec<PathBuf> = std::fs::read_dir(game)
        .map(|d| d.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    files.sort();
    for f in files {
        let is_rlb = f.extension().is_some_and(|x| x.eq_ignore_ascii_case("rlb"));
        if !is_rlb {
            continue;
        }
        let Ok(bytes) = source::read_regular(&f, output::MAX_UPDATE_BYTES) else {
            continue;
        };
        let Ok(a) = nres::read(&bytes, nres::Mode::Strict) else {
            continue;
        };
        let same_archive = output::same_file(&f, base.0);
        for i in source::model_entries(&a) {
            let entry = source::decode_name(a.entries[i].name);
            if same_archive && base.1.is_some_and(|b| b.eq_ignore_ascii_case(&entry)) {
                continue;
            }
            let Some(w) = source::find_wear(&a, a.entries[i].name) else {
                continue;
            };
            let Ok(w) = Wear::parse(w) else { continue };
            let model = format!(
                "{}:{entry}",
                f.file_name()
                    .map(|n| n.to_string_lossy())
                    .unwrap_or_default()
            );
            for row in &w.materials {
                // The entry the game draws for the row (its own, or the
                // DEFAULT fallback when the library has none of that name).
                let key = row.name.to_ascii_uppercase();
                let (drawn, fallback) = drawn.entry(key).or_insert_with_key(|k| {
                    mats.drawn_for(k).map_or((String::new(), false), |(i, f)| {
                        (mats.name(i).to_ascii_uppercase(), f.is_some())
                    })
                });
                if let Some(what) = watch.get(drawn.as_str()) {
                    for k in what {
                        users.entry(k.clone()).or_default().insert(model.clone());
                        if *fallback {
                            by_fallback
                                .entry(k.clone())
                                .or_default()
                                .insert(model.clone());
                        }
                    }
                }
            }
        }
    }
    for (what, models) in users {
        let fallback = by_fallback.get(&what).map_or(0, BTreeSet::len);
        let through = if fallback == 0 {
            String::new()
        } else {
            format!(
                " ({fallback} of them through the {DEFAULT_MATERIAL} fallback: their WEAR names a material {} does not hold)",
                mats.label()
            )
        };
        rep.warnings.push(format!(
            "{what} is shared: {} other model(s) of the game folder show the edit too{through}: {}",
            models.len(),
            models.iter().cloned().collect::<Vec<_>>().join(", ")
        ));
        rep.shared.insert(what, models.into_iter().collect());
    }
}

/// Without `--game-dir`: the base colour images of the materials msh2gltf
/// exported are compared with the `Textures.lib` entries found for the
/// base as msh2gltf finds them (its folder, then each parent); a painted
/// texture is refused naming `--game-dir`, never dropped silently. Returns
/// a note when no library is found (the pixels are then not compared).
///
/// # Errors
/// [`RunError::Conversion`] (`gltf.texture_edit`) naming each texture
/// whose pixels differ; an image that does not decode.
pub(super) fn refuse_pixel_edits(
    cli: &Args,
    doc: &GltfFile,
    base: &Path,
) -> Result<Option<String>, RunError> {
    let mats: Vec<MaterialEdit> = material_edits::exported_materials(doc)
        .into_iter()
        .filter(|e| e.texture.is_none() && e.image.is_some() && e.exported_texture.is_some())
        .collect();
    if mats.is_empty() {
        return Ok(None);
    }
    let lib = crate::material::Libraries::find_for(base, None)
        .and_then(|d| file_any_case(&d, TEXTURES_LIB))
        .and_then(|p| Library::open(&p).ok());
    let Some(lib) = lib else {
        return Ok(Some(format!(
            "texture pixels not compared: no {TEXTURES_LIB} found for {} (give --game-dir GAME to compare and write texture edits)",
            base.display()
        )));
    };
    let order = order(cli);
    let topts = TextureOptions {
        max_work: cli.max_work,
        allow_outside: cli.allow_outside,
        order,
        ..TextureOptions::default()
    };
    let mut painted = BTreeSet::new();
    let mut seen = BTreeSet::new();
    for e in &mats {
        let (Some(i), Some(t)) = (e.image, e.exported_texture.as_deref()) else {
            continue;
        };
        let Some(k) = find_texture(&lib, t) else {
            continue;
        };
        if !seen.insert(i) {
            continue;
        }
        let img = gm::decode_image(doc, cli.input.parent(), i, &topts)
            .map_err(|x| conversion(format!("{}: {x}", cli.input.display())))?;
        if !retexture::same_pixels(lib.data(k), &img, &order.channel_order()).unwrap_or(true) {
            painted.insert(lib.name(k));
        }
    }
    if painted.is_empty() {
        return Ok(None);
    }
    Err(conversion(format!(
        "{}: gltf.texture_edit: texture(s) {:?} painted (the pixels differ from {}'s entries); give --game-dir GAME to write them into a copy of the game's {TEXTURES_LIB} beside the output (or the game's own with --in-place), or revert them",
        cli.input.display(),
        painted,
        lib.label()
    )))
}
