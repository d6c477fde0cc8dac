//! Maps in a batch run: `MAPS/<map>/Land.msh` → `<OUT>/MAPS/<map>.glb`,
//! one report row per map (kind `terrain`).

use std::path::PathBuf;
use std::time::Instant;

use super::convert::{convert_file, libraries_shared};
use super::export::TerrainExportOptions;
use super::Mode;
use crate::output::WritePlan;
use crate::run::{self, BatchOptions, Counts, Format, ReportRow, Status};

/// One map found by the batch driver's discovery (`crate::batch::discover`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TerrainJob {
    /// The Land.msh path.
    pub msh: PathBuf,
    /// Output file (`.glb`, or `.gltf` with a `.bin` beside it).
    pub output: PathBuf,
}

/// The files map job `j` writes: its output, and the `.bin` beside a
/// `.gltf`.
pub fn outputs(j: &TerrainJob) -> Vec<PathBuf> {
    run::outputs_of(&j.output, Format::Glb)
}

run::pipeline_of_jobs!(TerrainJob, "terrain", run);

fn row(source: String, status: Status) -> ReportRow {
    ReportRow {
        kind: Some("terrain".into()),
        ..ReportRow::new(source, status)
    }
}

/// The map pipeline of a batch: converts every map job (sequentially: a
/// map takes milliseconds) with the run's shared options (`opts.areals`
/// adds the navigation outlines), after claiming its outputs in `plan` (an
/// output that is an input or another output fails the map with the
/// `output.*` rule).
pub fn run(
    jobs: &[TerrainJob],
    opts: &BatchOptions,
    plan: &mut WritePlan,
    progress: &(dyn Fn(&ReportRow) + Sync),
) -> Vec<ReportRow> {
    let topts = TerrainExportOptions {
        up: opts.convert.up,
        lod: opts.convert.cells.lod.min(1),
        all_lods: opts.convert.cells.all_cells,
        areals: opts.areals,
        textures: opts.convert.textures,
        max_work: opts.convert.max_work,
    };
    let mode = match opts.convert.mode {
        crate::msh::read::Mode::Tolerant => Mode::Tolerant,
        _ => Mode::Strict,
    };
    let mut rows = Vec::with_capacity(jobs.len());
    for j in jobs {
        let t0 = Instant::now();
        let source = j.msh.display().to_string();
        let mut r = row(source.clone(), Status::Converted);
        // Maps decode textures in the retail order (as `msh2gltf MAP`).
        let (libs, lib_warnings) = libraries_shared(
            &j.msh,
            opts.game_dir.as_deref(),
            crate::convention::TexmOrder::default(),
            &opts.files,
        );
        let force = plan.force();
        let convert = || {
            convert_file(&j.msh, &j.output, mode, libs.as_deref(), &topts, force)
                .map_err(|e| (e.rule.to_string(), e.to_string()))
        };
        let mut result = plan
            .claim_all(&outputs(j))
            .map_err(|e| (e.rule().to_string(), e.to_string()))
            .and_then(|()| convert());
        if force && matches!(&result, Err((rule, e)) if run::appeared_meanwhile(rule, e)) {
            // Another run created the output after the check: --force
            // replaces it (issue 26 item 11).
            result = convert();
        }
        match result {
            Ok(c) => {
                r.output = Some(j.output.display().to_string());
                r.libraries = libs.as_ref().map_or_else(Vec::new, |l| {
                    l.files().iter().map(|p| p.display().to_string()).collect()
                });
                r.warnings = lib_warnings;
                r.warnings.extend(c.gltf.warnings.iter().cloned());
                r.notes = c.notes;
                r.counts = Some(Counts {
                    vertices: c.src_vertices,
                    triangles: c.gltf.triangles,
                    materials: c.gltf.materials,
                    textures: c.gltf.textures,
                    ..Default::default()
                });
            }
            Err((rule, e)) if run::appeared_meanwhile(&rule, &e) => {
                // Created by a concurrent run again: kept, as for models.
                r.status = Status::Skipped;
                r.kind = Some("exists".into());
                r.reason = Some(e);
                r.output = Some(j.output.display().to_string());
            }
            Err((rule, e)) => {
                r.status = Status::Failed;
                r.errors = vec![format!("{source}: {e}")];
                r.rule = Some(rule);
            }
        }
        r.time_ms = t0.elapsed().as_secs_f64() * 1000.0;
        progress(&r);
        rows.push(r);
    }
    rows
}
