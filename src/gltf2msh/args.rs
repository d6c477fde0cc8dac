//! `gltf2msh`'s command line (clap): the arguments and their checks. The
//! doc comments below are the `--help` text.

use std::path::PathBuf;

use clap::Parser;

use super::{usage, RunError};

/// Write a glTF (.glb/.gltf) into an MSH model.
///
/// With --base, every value the glTF leaves as msh2gltf exported it keeps the
/// base's bytes, so an unedited trip is byte-identical; edits are quantized
/// by the seed rules and derived data (bounds, Res7, Res8/Res19) is rebuilt.
/// Without --base, a new model is authored from the scene: the bare model
/// and its WEAR table NEW.wea beside it, or with --into both as entries of an
/// archive.
#[derive(Debug, Parser)]
#[command(name = "gltf2msh", version, about, long_about = None,
    after_help = "Examples:\n  gltf2msh tank.glb --base tank.msh            (writes tank.msh beside tank.glb unless that is the base)\n  gltf2msh tank.glb --base tank.msh -o tank2.msh\n  gltf2msh tank.glb --base units.rlb:R_L_89.msh -o units_new.rlb   (archive copy, one entry replaced)\n  gltf2msh tank.glb --base GAME/units.rlb:R_L_89.msh -o out/units.rlb --game-dir GAME   (also out/Material.lib, out/Textures.lib: recoloured materials, painted textures)\n  gltf2msh unit.glb --base GAME/UNITS/BATTLE/w_b_wlk1.dat -o out/   (each edited part into a copy of its archive in out/)\n  gltf2msh scene.glb -o NEW.msh                 (new model: NEW.msh and NEW.wea)\n  gltf2msh scene.glb --into units.rlb --name NEW -o units_new.rlb   (archive copy with NEW.msh and NEW.wea)\n  gltf2msh scene.glb --into units.rlb --name NEW --force             (replaces units.rlb in place)\n  gltf2msh scene.glb -o out/NEW.msh --game-dir GAME   (also out/Material.lib, out/Textures.lib: copies with the new materials and textures)\n  gltf2msh map.glb --base GAME/MAPS/m01/Land.msh --in-place   (an install: the original kept in GAME/.mshgltf-originals)\n  gltf2msh mission.glb --base GAME/MISSIONS/Single.01/data.tma --in-place\n  gltf2msh --new-mission MISSIONS --template MISSIONS/Single.01 --map MAPS/m01 --name \"Iron Dawn\"   (a new mission: gltf2msh --new-mission DIR --help)\n  gltf2msh terrain.glb --new-map GAME/MAPS/mymap --palette GAME/MAPS/m01   (a new map folder from Blender's New Parkan map grid)\n\nInstalls: gltf2msh --installed GAME | --restore GAME | --pack MOD.zip GAME | --apply MOD.zip GAME (their options: gltf2msh --restore GAME --help)\n\nExit codes: 0 ok, 1 conversion error (including glTF content MSH cannot hold: skins, morph targets, points, lines), 2 usage error.")]
pub struct Args {
    /// The edited glTF: .glb, or .gltf with its buffers.
    pub input: PathBuf,
    /// The model the glTF was exported from: a .msh file or ARCHIVE:ENTRY;
    /// for an assembled unit, its unit file (`UNITS/<class>/x.dat`): each
    /// edited part is written into its archive entry (copies of the
    /// changed archives in the -o folder, or the game's own with --in-place).
    #[arg(long)]
    pub base: Option<String>,
    /// Output: a .msh (bare model; authoring also writes the .wea beside it)
    /// or, with an ARCHIVE:ENTRY base or --into, an archive; with a unit
    /// base, the folder of the archive copies. Default: the
    /// input's name with .msh, beside it (with --into: the archive itself,
    /// which needs --force; with a unit base: the input's folder).
    #[arg(short = 'o', long = "output")]
    pub output: Option<PathBuf>,
    /// Frames per second of the glTF timeline (default: the scene extras' fps, else 24).
    #[arg(long)]
    pub fps: Option<f32>,
    /// Replace an existing output file (never the base or the input). Does
    /// not replace entries inside archives or libraries: see --replace-entries.
    #[arg(long)]
    pub force: bool,
    /// Authoring: replace existing archive entries (NAME.msh, NAME.wea) and
    /// library entries (materials, textures) named like the new ones;
    /// without it such a collision is refused and the names are listed.
    /// With --base --game-dir: a material pointed at an image named like a
    /// library texture with other pixels replaces that texture.
    #[arg(long)]
    pub replace_entries: bool,
    /// Keep every integer-frame key (reduce only resampled channels).
    #[arg(long)]
    pub keep_keys: bool,
    /// Print nothing but errors (warnings are printed by default, one line each).
    #[arg(short, long, conflicts_with = "verbose")]
    pub quiet: bool,
    /// Also print the change summary (the --report's import object).
    #[arg(short, long)]
    pub verbose: bool,
    /// Authoring: add the new model to a copy of this archive (entries
    /// NAME.msh and NAME.wea; existing ones only with --replace-entries); the
    /// copy is -o, or the archive itself with --force.
    #[arg(long, value_name = "ARCHIVE", conflicts_with = "base")]
    pub into: Option<PathBuf>,
    /// Authoring with --into: the entry stem (default: the input's stem).
    #[arg(long, requires = "into")]
    pub name: Option<String>,
    /// Authoring: convert skinned meshes in their bind pose and morphed
    /// meshes with their base shape instead of refusing them.
    #[arg(long, conflicts_with = "base")]
    pub ignore_skins: bool,
    /// Authoring: also write the new materials (MAT0), textures and lightmap
    /// (Texm) into copies of this folder's Material.lib, Textures.lib and
    /// LightMap.lib, beside the output (or into the originals with --in-place).
    /// With --base: write the glTF's material edits (colour, opacity, blend
    /// mode, texture) and texture edits (pixels, re-encoded in the entry's
    /// own format) into copies of Material.lib and Textures.lib beside the
    /// output (or the originals with --in-place); without it they are refused.
    #[arg(long, value_name = "GAME")]
    pub game_dir: Option<PathBuf>,
    /// Change the game's files themselves: with --game-dir its libraries;
    /// with --base ARCHIVE:ENTRY and no -o (or -o the archive) the archive;
    /// with --base MAPS/m01/Land.msh or MISSIONS/.../data.tma and no -o
    /// the map (its Land.msh and, when its areal heights follow the edit,
    /// Land.map, one commit) or mission itself; locked from read to commit (a mod needs no
    /// copying by hand). An install: the game's original of each file
    /// replaced is kept, once, in GAME/.mshgltf-originals
    /// (`gltf2msh --restore GAME` puts it back).
    #[arg(long)]
    pub in_place: bool,
    /// With --game-dir: texture depth: auto (565 opaque, 8888 with alpha),
    /// 16 (565 / 4444) or 32 (8888).
    #[arg(long, value_name = "auto|16|32", default_value = "auto", value_parser = ["auto", "16", "32"])]
    pub texture_bits: String,
    /// With --game-dir: largest texture side (rounded up to a power of two).
    #[arg(long, value_name = "N", default_value_t = 1024)]
    pub max_texture: u32,
    /// With --game-dir: byte order of 8888 textures: retail (B, G, R, A) or
    /// argb (A, R, G, B).
    #[arg(long, value_name = "retail|argb", default_value = "retail", value_parser = ["retail", "argb"])]
    pub texm_order: String,
    /// Authoring: fit a scene over 65535 triangles under the limit with
    /// meshoptimizer (reports the error) instead of refusing it.
    #[arg(long, conflicts_with = "base")]
    pub simplify: bool,
    /// Write a JSON report of the import to this file.
    #[arg(long, value_name = "FILE.json")]
    pub report: Option<PathBuf>,
    /// Also read buffer URIs that are absolute or lead outside the glTF's
    /// folder (they are refused by default).
    #[arg(long)]
    pub allow_outside: bool,
    /// Work budget (units, see README "Safety"): nodes x 32 + primitive
    /// instances x 64, and JSON bytes / 2; a glTF above it fails with rule
    /// `limits.work` before its data is read.
    #[arg(long, value_name = "UNITS", default_value_t = crate::limits::DEFAULT_MAX_WORK)]
    pub max_work: u64,
    /// Complete the commits in FOLDER that a kill, crash or power loss
    /// interrupted (their journals, `.mshgltf-journal-*`): each is finished
    /// when all its renames were done, else rolled back, and said; then
    /// exit. Any run of either tool that touches the folder does the same
    /// first (docs/safety.md). Given alone: `gltf2msh --recover FOLDER`
    /// ([`RecoverArgs`]).
    #[arg(long, value_name = "FOLDER", exclusive = true)]
    pub recover: Option<PathBuf>,
    /// With a mission base (data.tma), or with --new-mission (every object
    /// new; gltf2msh --new-mission DIR --help): set every moved or new object on the
    /// ground as the game places it (mission-notes §5.4): a unit's lowest
    /// vertex on the terrain, scenery keeping its origin's offset above the
    /// ground, a building on the mean ground of its .bas outer ring (kept
    /// where it is when its start flag is set); units inside buildings are
    /// not touched. Without it nothing is moved, and a warning names each
    /// moved or new object left more than 0.25 above or below the ground.
    /// Either way the --report's `ground` rows give each such object's z and
    /// the rule's.
    #[arg(long)]
    pub drop_to_ground: bool,
    /// Make a new map folder (MAPS/NAME: Land.msh, Land.map, Land1.wea,
    /// Land2.wea) from a grid mesh: the object the Blender add-on's "New
    /// Parkan map" makes, sculpted (heights only) and painted with the
    /// palette's materials (issue 38; docs/modding.md "Make a new level").
    /// An existing map there is replaced only with --force.
    #[arg(long, value_name = "MAPS/NAME", conflicts_with_all = ["base", "into", "output"])]
    pub new_map: Option<PathBuf>,
    /// With --new-map: the existing map folder whose Land1.wea/Land2.wea
    /// rows are the palette (default: the map the glTF names, else the
    /// first map folder beside the new one).
    #[arg(long, value_name = "MAPS/EXISTING", requires = "new_map")]
    pub palette: Option<PathBuf>,
}

/// `gltf2msh --recover FOLDER`, parsed on its own (the glTF input is not
/// asked for): the binary uses it when its arguments hold `--recover`.
#[derive(Debug, Parser)]
#[command(name = "gltf2msh", version, about = "Complete the commits a kill or crash interrupted in FOLDER (docs/safety.md)", long_about = None)]
pub struct RecoverArgs {
    /// The folder whose interrupted commits (`.mshgltf-journal-*`) are
    /// finished or rolled back.
    #[arg(long, value_name = "FOLDER")]
    pub recover: PathBuf,
}

/// `gltf2msh --installed GAME`, `--restore GAME [--force]`, `--pack
/// MOD.zip GAME`, `--apply MOD.zip GAME`: the installs into a game folder
/// listed, undone, packed and applied (docs/safety.md "An install keeps
/// the game's originals"), parsed on their own (no glTF input): the binary
/// uses it when its arguments hold one of the four.
#[derive(Debug, Parser)]
#[command(name = "gltf2msh", version, long_about = None,
    about = "List, undo, pack and apply the installs into a game folder (docs/safety.md)",
    group(clap::ArgGroup::new("what").required(true).args(["installed", "restore", "pack", "apply"])),
    after_help = "Every install (gltf2msh ... --in-place, the add-on's Install into the game) keeps the game's original of each file it replaces, once, in GAME/.mshgltf-originals.\n\nExamples:\n  gltf2msh --installed GAME\n  gltf2msh --restore GAME\n  gltf2msh --pack mymod.zip GAME\n  gltf2msh --apply mymod.zip OTHER_GAME\n\nExit codes: 0 ok, 1 something could not be restored or read (named), 2 usage, or a mod refused (its originals differ).")]
pub struct StoreArgs {
    /// List what is installed over the game's originals: each file,
    /// replaced or added, its original's SHA-256, and whether it still
    /// holds what was installed.
    #[arg(long, value_name = "GAME")]
    pub installed: Option<PathBuf>,
    /// Put every replaced file back byte-identical (its backup's SHA-256
    /// checked), remove every file an install added, empty the store. A
    /// file changed since its install is refused by name (nothing is
    /// restored) unless --force.
    #[arg(long, value_name = "GAME")]
    pub restore: Option<PathBuf>,
    /// Pack the installed files and their originals' SHA-256 into MOD.zip
    /// (then the GAME folder: `--pack MOD.zip GAME`).
    #[arg(long, value_name = "MOD.zip", requires = "game")]
    pub pack: Option<PathBuf>,
    /// Apply MOD.zip to the GAME folder (`--apply MOD.zip GAME`), keeping
    /// its originals as any install does; refused, naming each file, when an
    /// original there differs from the one the mod was made over.
    #[arg(long, value_name = "MOD.zip", requires = "game")]
    pub apply: Option<PathBuf>,
    /// The game folder, with --pack and --apply.
    #[arg(value_name = "GAME")]
    pub game: Option<PathBuf>,
    /// --restore: also put back files changed since their install;
    /// --pack: replace an existing MOD.zip.
    #[arg(long)]
    pub force: bool,
    /// Write a JSON report (what was listed, restored, packed or applied).
    #[arg(long, value_name = "FILE.json")]
    pub report: Option<PathBuf>,
    /// Print nothing but errors.
    #[arg(short, long)]
    pub quiet: bool,
}

impl StoreArgs {
    /// Whether `args` (program name first) ask for one of the store
    /// commands: then they are parsed as [`StoreArgs`], not [`Args`].
    pub fn asked(args: &[std::ffi::OsString]) -> bool {
        args.iter().skip(1).any(|a| {
            a.to_str().is_some_and(|a| {
                ["--installed", "--restore", "--pack", "--apply"]
                    .iter()
                    .any(|f| a == *f || a.starts_with(&format!("{f}=")))
            })
        })
    }

    /// The command and its game folder.
    ///
    /// # Errors
    /// [`RunError::Usage`]: a second game folder given.
    pub fn command(&self) -> Result<(super::store::Command, PathBuf), RunError> {
        use super::store::Command;
        let one = |flag: &str, g: &PathBuf| match &self.game {
            Some(extra) => Err(usage(format!(
                "{flag} {}: a second folder {} given; {flag} takes one game folder",
                g.display(),
                extra.display()
            ))),
            None => Ok(g.clone()),
        };
        let game = || self.game.clone().unwrap_or_default();
        if let Some(g) = &self.installed {
            return Ok((Command::Installed, one("--installed", g)?));
        }
        if let Some(g) = &self.restore {
            return Ok((Command::Restore, one("--restore", g)?));
        }
        if let Some(z) = &self.pack {
            return Ok((Command::Pack(z.clone()), game()));
        }
        match &self.apply {
            Some(z) => Ok((Command::Apply(z.clone()), game())),
            None => Err(usage("give --installed, --restore, --pack or --apply")),
        }
    }
}

impl RecoverArgs {
    /// Whether `args` (the process's, program name first) ask for
    /// `--recover`: then they are parsed as [`RecoverArgs`], not [`Args`].
    pub fn asked(args: &[std::ffi::OsString]) -> bool {
        args.iter().skip(1).any(|a| {
            a.to_str()
                .is_some_and(|a| a == "--recover" || a.starts_with("--recover="))
        })
    }
}

impl Args {
    /// The archive of `--base ARCHIVE:ENTRY` when `--in-place` changes it
    /// itself: no `-o`, or `-o` naming that archive.
    pub fn base_in_place(&self) -> Option<std::path::PathBuf> {
        if !self.in_place {
            return None;
        }
        let crate::source::InputSpec::Entry { archive, .. } =
            crate::source::parse_input(self.base.as_deref()?)
        else {
            return None;
        };
        match &self.output {
            None => Some(archive),
            Some(o) if crate::output::same_file(o, &archive) => Some(archive),
            Some(_) => None,
        }
    }

    /// The bare base file (a map's `Land.msh`, a mission's `data.tma`)
    /// when `--in-place` writes over it itself: `--base FILE` (not a unit
    /// file) and no `-o`, or `-o` naming it. Its kind decides later whether
    /// that is allowed (a bare model is refused: its home is an archive).
    pub fn file_in_place(&self) -> Option<std::path::PathBuf> {
        if !self.in_place || self.base_is_unit_file() {
            return None;
        }
        let crate::source::InputSpec::File(p) = crate::source::parse_input(self.base.as_deref()?)
        else {
            return None;
        };
        match &self.output {
            None => Some(p),
            Some(o) if crate::output::same_file(o, &p) => Some(p),
            Some(_) => None,
        }
    }

    /// True when `--base` names a unit file (`.dat`): `--in-place` then
    /// changes the archives of its edited parts.
    pub fn base_is_unit_file(&self) -> bool {
        self.base.as_deref().is_some_and(|b| {
            matches!(crate::source::parse_input(b), crate::source::InputSpec::File(p)
                if p.extension().is_some_and(|x| x.eq_ignore_ascii_case("dat")))
        })
    }

    /// Range checks of the numeric options (the same limits as msh2gltf's).
    ///
    /// # Errors
    /// [`RunError::Usage`] naming the option.
    pub fn validate(&self) -> Result<(), RunError> {
        if let Some(f) = self.fps {
            crate::limits::check_fps(f).map_err(|e| usage(format!("--fps: {e}")))?;
        }
        crate::limits::check_work(self.max_work).map_err(|e| usage(format!("--max-work: {e}")))?;
        if self.in_place
            && self.game_dir.is_none()
            && self.base_in_place().is_none()
            && self.file_in_place().is_none()
            && !self.base_is_unit_file()
        {
            return Err(usage(
                "--in-place changes the game's libraries (with --game-dir), the base archive (with --base ARCHIVE:ENTRY and no other -o), a map or mission base itself (with --base Land.msh or data.tma and no other -o) or a unit's part archives (with --base UNITS/.../x.dat): give one of them",
            ));
        }
        if self.in_place && self.base_is_unit_file() {
            if let Some(o) = &self.output {
                return Err(usage(format!(
                    "--in-place with -o {} and a unit base: --in-place changes the game's own part archives, -o names a folder for copies of them; give one of the two",
                    o.display()
                )));
            }
        }
        let mission_base = self.base.as_deref().is_some_and(|b| {
            std::path::Path::new(b)
                .extension()
                .is_some_and(|x| x.eq_ignore_ascii_case("tma"))
        });
        if self.drop_to_ground && !mission_base {
            return Err(usage(
                "--drop-to-ground sets a mission's objects on the ground: it needs --base MISSIONS/.../data.tma (an edit) or --new-mission DIR (a new mission's scene)",
            ));
        }
        if !(1..=MAX_TEXTURE_SIDE).contains(&self.max_texture) {
            return Err(usage(format!(
                "--max-texture {}: must be 1..={MAX_TEXTURE_SIDE} pixels",
                self.max_texture
            )));
        }
        Ok(())
    }
}

/// Largest `--max-texture` (a Texm side is a u16 after rounding).
pub const MAX_TEXTURE_SIDE: u32 = 1 << 15;
