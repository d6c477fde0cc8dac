//! `msh2gltf`'s command line (clap): the arguments, their value enums and
//! what they become: [`ConvertOptions`] and [`BatchOptions`]. The doc
//! comments below are the `--help` text (hence plain `<...>` placeholders,
//! which rustdoc would take for HTML tags).
#![allow(rustdoc::invalid_html_tags)]

use std::path::PathBuf;

use clap::{Parser, ValueEnum};

use super::RunError;
use crate::convention::{
    BatchLayout, ConventionChoices, NameSource, QuatLayout, TexmOrder, UvSign, WearKey,
};
use crate::convert::ConvertOptions;
use crate::gltf_export::{CellChoice, Up};
use crate::msh::read::Mode;
use crate::run::{BatchOptions, Format};

/// `--up`: the glTF up axis.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum UpArg {
    /// glTF = (x, z, -y) of game coordinates (glTF's Y-up; Blender then shows game axes).
    Y,
    /// Game coordinates unchanged (Z-up inside the glTF).
    Z,
}

/// `--quat-layout` (format-notes §6 R3).
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum QuatArg {
    /// Per model: the slot holding ±32767 in most static keys, then the Res2 box, else wxyz.
    Auto,
    /// Stored x, y, z, w (the seed's reading).
    Xyzw,
    /// Stored w, x, y, z (retail files).
    Wxyz,
}

/// `--names` (format-notes §6 R1).
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum NamesArg {
    /// Res9 when it is 32 x nodes bytes with a name, else Res10.
    Auto,
    /// Res9 32-byte fields (retail; Res10 then holds labels).
    Res9,
    /// Res10 strings (seed).
    Res10,
}

/// `--batch-layout` (format-notes §6 R2).
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum BatchArg {
    /// Retail when every batch has +2 = 0 and +4 high byte 0x00/0xFF.
    Auto,
    /// Material key in the low byte of Batch20 +4, lightmap in the high byte.
    Retail,
    /// Material key in the u16 at Batch20 +2.
    Seed,
}

/// `--wear-key` (format-notes §6 R4).
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum WearKeyArg {
    /// By id when the WEAR ids are a permutation of 0..n, else by row.
    Auto,
    /// The WEAR id column (retail).
    Id,
    /// The row number (seed).
    Row,
}

/// `--uv` (format-notes §6 R6).
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum UvArg {
    /// Signed only when a triangle spans more than 0x8000 as u16 but not as i16.
    Auto,
    /// u16 / 1024 (retail).
    Unsigned,
    /// i16 / 1024 (seed).
    Signed,
}

/// `--texm-order` (format-notes §6 R8).
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum TexmArg {
    /// 8888 B,G,R,A; 888 B,G,R,X; palettes B,G,R,X (real game files).
    Retail,
    /// 8888 A,R,G,B; 888 R,G,B,X; palettes R,G,B,A (the other public reading).
    Argb,
}

/// `--format`: the output container of archives and folders.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum FormatArg {
    /// Binary glTF (one .glb per model).
    Glb,
    /// JSON .gltf with a .bin beside it.
    Gltf,
}

/// Convert Parkan: Iron Strategy MSH models (NRes) to glTF 2.0.
///
/// INPUT is a bare model file, an archive (every .msh entry is converted into
/// the OUTPUT folder), ARCHIVE:ENTRY (one model of an archive), or a game
/// folder (every model of every archive, with textures, into OUTPUT).
#[derive(Debug, Parser)]
#[command(name = "msh2gltf", version, about, long_about = None,
    after_help = "Examples:\n  msh2gltf model.msh out.glb\n  msh2gltf units.rlb:R_L_89.msh tank.gltf\n  msh2gltf units.rlb out/units\n  msh2gltf GAME_DIR OUT_DIR --jobs 2 --report report.json\n\nExit codes: 0 ok, 1 a model failed (the rest converted), 2 usage error.")]
pub struct Args {
    /// Model file, archive, ARCHIVE:ENTRY, or game folder.
    pub input: String,
    /// Output .glb/.gltf (one model; default: beside the input) or folder
    /// (archive or game folder; default for an archive: <archive stem>/ beside it).
    pub output: Option<PathBuf>,
    /// Frames per second for key times (t = frame / fps).
    #[arg(long, default_value_t = 24.0)]
    pub fps: f32,
    /// Up axis of the glTF.
    #[arg(long, value_enum, default_value = "y")]
    pub up: UpArg,
    /// Where node names are (format-notes §6 R1).
    #[arg(long, value_enum, default_value = "auto", help_heading = "Conventions")]
    pub names: NamesArg,
    /// Where a batch's material key is (format-notes §6 R2).
    #[arg(long, value_enum, default_value = "auto", help_heading = "Conventions")]
    pub batch_layout: BatchArg,
    /// Which stored i16 of a Res8 quaternion is w (format-notes §6 R3).
    #[arg(long, value_enum, default_value = "auto", help_heading = "Conventions")]
    pub quat_layout: QuatArg,
    /// What a material key selects in the WEAR table (format-notes §6 R4).
    #[arg(long, value_enum, default_value = "auto", help_heading = "Conventions")]
    pub wear_key: WearKeyArg,
    /// How Res5 UVs are read (format-notes §6 R6).
    #[arg(long, value_enum, default_value = "auto", help_heading = "Conventions")]
    pub uv: UvArg,
    /// Byte order of Texm 8888/888/palette textures (format-notes §6 R8).
    #[arg(
        long,
        value_enum,
        default_value = "retail",
        help_heading = "Conventions"
    )]
    pub texm_order: TexmArg,
    /// Damage state of the slot cell each node shows (0 intact, 1 damaged, 2 destroyed).
    #[arg(long, default_value_t = 0, value_parser = clap::value_parser!(u8).range(0..=2))]
    pub state: u8,
    /// Level of the slot cell each node shows (0..3 LOD, 4 = cockpit view).
    #[arg(long, default_value_t = 0, value_parser = clap::value_parser!(u8).range(0..=4))]
    pub lod: u8,
    /// Add every non-empty cell as a child node <node>.S<state>L<lod>.
    #[arg(long)]
    pub all_cells: bool,
    /// Maps: add Land.map's navigation polygons as a node of outlines.
    #[arg(long)]
    pub areals: bool,
    /// Convert what is locally sound in broken models and report what was skipped.
    #[arg(long)]
    pub tolerant: bool,
    /// Replace existing output files.
    #[arg(long)]
    pub force: bool,
    /// Output format for archives and folders.
    #[arg(long, value_enum, default_value = "glb")]
    pub format: FormatArg,
    /// Folder holding Material.lib, Textures.lib and LightMap.lib; it wins
    /// over libraries beside the archive (default: beside the archive, then
    /// up the tree). The summary names the libraries used.
    #[arg(long, value_name = "DIR")]
    pub game_dir: Option<PathBuf>,
    /// Do not embed textures.
    #[arg(long)]
    pub no_textures: bool,
    /// Also write every texture and lightmap of the libraries found as PNG into DIR.
    #[arg(long, value_name = "DIR")]
    pub textures_out: Option<PathBuf>,
    /// Parallel jobs (default: all cores).
    #[arg(short, long, value_name = "N")]
    pub jobs: Option<usize>,
    /// Write a JSON report (per model: source, output, status, counts, warnings, errors, time).
    #[arg(long, value_name = "FILE.json")]
    pub report: Option<PathBuf>,
    /// Work budget per model (units of about 32 bytes: animation samples x 2,
    /// glTF nodes x 32, primitives x 16, output bytes / 32; see README
    /// "Safety"); a model above it fails with rule `limits.work` before the
    /// work is done.
    #[arg(long, value_name = "UNITS", default_value_t = crate::limits::DEFAULT_MAX_WORK)]
    pub max_work: u64,
    /// Print only errors.
    #[arg(short, long, conflicts_with = "verbose")]
    pub quiet: bool,
    /// Print warnings of every model.
    #[arg(short, long, action = clap::ArgAction::Count)]
    pub verbose: u8,
    /// Print the model entries of INPUT (an archive or a bare model), or the
    /// placed objects of a mission (data.tma), as JSON and convert nothing.
    #[arg(long, conflicts_with = "output")]
    pub list: bool,
    /// INPUT is a game folder: write its objects (every objects.rlb STAT
    /// record, every .dat under UNITS) as an asset library into DIR: one
    /// .glb per object with its placement template (extras.parkan_asset),
    /// and DIR/index.json (catalogs per kind and archive or class, the
    /// records a model can be changed to). Blender's "Build the game's
    /// asset library" runs this.
    #[arg(long, value_name = "DIR", conflicts_with_all = ["output", "list"])]
    pub asset_library: Option<PathBuf>,
}

impl Args {
    /// Range checks of the numeric options (the same limits as gltf2msh's,
    /// [`crate::limits`]) and `--game-dir` (an existing folder).
    ///
    /// # Errors
    /// [`RunError::Usage`] naming the option.
    pub fn validate(&self) -> Result<(), RunError> {
        let usage = |opt: &str, e: &dyn std::fmt::Display| RunError::Usage(format!("{opt}: {e}"));
        crate::limits::check_fps(self.fps).map_err(|e| usage("--fps", &e))?;
        if let Some(j) = self.jobs {
            crate::limits::check_jobs(j).map_err(|e| usage("--jobs", &e))?;
        }
        crate::limits::check_work(self.max_work).map_err(|e| usage("--max-work", &e))?;
        if let Some(g) = &self.game_dir {
            let why = match std::fs::metadata(g) {
                Ok(m) if m.is_dir() => return Ok(()),
                Ok(_) => "not a folder (it is a file)".to_string(),
                Err(e) => e.to_string(),
            };
            return Err(RunError::Usage(format!(
                "--game-dir {}: {why}",
                g.display()
            )));
        }
        Ok(())
    }

    /// The model pipeline's options ([`crate::convert`]): `--fps`, `--up`,
    /// the convention flags (`auto` = `None`), the cell choice,
    /// `--tolerant`, `--no-textures` and `--max-work`.
    pub fn convert_options(&self) -> ConvertOptions {
        ConvertOptions {
            fps: self.fps,
            up: match self.up {
                UpArg::Y => Up::Y,
                UpArg::Z => Up::Z,
            },
            conventions: self.conventions(),
            cells: CellChoice {
                state: self.state,
                lod: self.lod,
                all_cells: self.all_cells,
            },
            mode: if self.tolerant {
                Mode::Tolerant
            } else {
                Mode::Strict
            },
            textures: !self.no_textures,
            max_work: self.max_work,
        }
    }

    /// The convention flags (format-notes §6 R1–R6; `auto` = `None`).
    fn conventions(&self) -> ConventionChoices {
        ConventionChoices {
            names: match self.names {
                NamesArg::Auto => None,
                NamesArg::Res9 => Some(NameSource::Res9),
                NamesArg::Res10 => Some(NameSource::Res10),
            },
            batch: match self.batch_layout {
                BatchArg::Auto => None,
                BatchArg::Retail => Some(BatchLayout::Retail),
                BatchArg::Seed => Some(BatchLayout::Seed),
            },
            quat: match self.quat_layout {
                QuatArg::Auto => None,
                QuatArg::Xyzw => Some(QuatLayout::Xyzw),
                QuatArg::Wxyz => Some(QuatLayout::Wxyz),
            },
            wear_key: match self.wear_key {
                WearKeyArg::Auto => None,
                WearKeyArg::Id => Some(WearKey::Id),
                WearKeyArg::Row => Some(WearKey::Row),
            },
            uv: match self.uv {
                UvArg::Auto => None,
                UvArg::Unsigned => Some(UvSign::Unsigned),
                UvArg::Signed => Some(UvSign::Signed),
            },
        }
    }

    /// The output format (`--format`).
    pub fn format(&self) -> Format {
        match self.format {
            FormatArg::Glb => Format::Glb,
            FormatArg::Gltf => Format::Gltf,
        }
    }

    /// The options every pipeline of the run shares (models, units, maps).
    pub fn batch_options(&self) -> BatchOptions {
        BatchOptions {
            convert: self.convert_options(),
            format: self.format(),
            force: self.force,
            game_dir: self.game_dir.clone(),
            textures_out: self.textures_out.clone(),
            texm_order: match self.texm_order {
                TexmArg::Retail => TexmOrder::Retail,
                TexmArg::Argb => TexmOrder::Argb,
            },
            areals: self.areals,
            files: Default::default(),
        }
    }
}
