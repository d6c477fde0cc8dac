//! What `msh2gltf` prints on stderr while it runs: one line per report row
//! (with warnings when asked), a progress bar on a terminal, and the
//! summary line.

use std::sync::Mutex;

use super::Args;
use crate::run::{Report, ReportRow, Status};

/// The run's stderr: `-q`/`-v`, one model or many, and the progress bar
/// (shown on a terminal for more than one model).
pub(super) struct Console {
    bar: Option<indicatif::ProgressBar>,
    print_lock: Mutex<()>,
    verbose: u8,
    quiet: bool,
    single: bool,
}

impl Console {
    /// The console of a run; `bar_len`: the number of report rows (files,
    /// models, maps) when the progress bar is shown.
    pub(super) fn new(args: &Args, single: bool, bar_len: Option<usize>) -> Self {
        let bar = bar_len.map(|n| {
            let b = indicatif::ProgressBar::new(n as u64);
            b.set_style(
                indicatif::ProgressStyle::with_template(
                    "{spinner} [{elapsed_precise}] {bar:40} {pos}/{len} {msg}",
                )
                .expect("valid template"),
            );
            b
        });
        Console {
            bar,
            print_lock: Mutex::new(()),
            verbose: args.verbose,
            quiet: args.quiet,
            single,
        }
    }

    /// One finished row: failures always, others unless `-q` (with the
    /// bar: only with `-v`); advances the bar.
    pub(super) fn progress(&self, r: &ReportRow) {
        let mut line = row_line(r, self.verbose > 0 || self.single);
        if self.verbose > 0 {
            line += &note_lines(r);
        }
        let _g = self.print_lock.lock();
        match &self.bar {
            Some(b) => {
                if r.status == Status::Failed || self.verbose > 0 {
                    b.println(line);
                }
                b.inc(1);
            }
            None if r.status == Status::Failed => eprintln!("{line}"),
            None if !self.quiet => eprintln!("{line}"),
            None => {}
        }
    }

    /// The rows of discovery (skipped files, files that cannot be opened),
    /// before any conversion: like [`Console::progress`] in a batch; only
    /// the failures (without warnings) for one model or with `-q`.
    pub(super) fn pre_rows(&self, rows: &[ReportRow]) {
        if !self.quiet && !self.single {
            for r in rows {
                self.progress(r);
            }
        } else {
            for r in rows.iter().filter(|r| r.status == Status::Failed) {
                eprintln!("{}", row_line(r, false));
            }
        }
    }

    /// Clears the progress bar.
    pub(super) fn finish(&self) {
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
    }
}

/// The summary line of a run: counts, time and the distinct libraries
/// the converted models used (`-` for none).
pub fn summary_line(report: &Report) -> String {
    let mut libs: Vec<String> = report
        .models
        .iter()
        .filter(|r| r.status == Status::Converted)
        .map(ReportRow::libraries_text)
        .collect();
    libs.sort();
    libs.dedup();
    format!(
        "summary: {} converted, {} skipped, {} failed in {:.2} s; libraries: {}",
        report.converted,
        report.skipped,
        report.failed,
        report.seconds,
        if libs.is_empty() {
            "-".into()
        } else {
            libs.join("; ")
        }
    )
}

/// The row's notes (facts that need no action), one `  note: …` line
/// each, for `-v`.
pub fn note_lines(r: &ReportRow) -> String {
    r.notes.iter().map(|n| format!("\n  note: {n}")).collect()
}

/// `, N warning(s)` when the row has warnings.
fn warning_count(r: &ReportRow) -> String {
    if r.warnings.is_empty() {
        String::new()
    } else {
        format!(", {} warning(s)", r.warnings.len())
    }
}

/// One human-readable line (plus warnings when asked) for a report row.
pub fn row_line(r: &ReportRow, with_warnings: bool) -> String {
    let mut s = match r.status {
        Status::Converted if r.kind.as_deref() == Some("terrain") => {
            let c = r.counts.clone().unwrap_or_default();
            format!(
                "converted {} -> {} (map: {} vertices, {} triangles, {} materials, {} textures; libraries: {}){}",
                r.source,
                r.output.as_deref().unwrap_or("?"),
                c.vertices,
                c.triangles,
                c.materials,
                c.textures,
                r.libraries_text(),
                warning_count(r)
            )
        }
        Status::Converted if r.kind.as_deref() == Some("mission") => {
            // The mission pipeline's counts: scene nodes, the map's
            // triangles; its first note counts placed objects and models.
            let c = r.counts.clone().unwrap_or_default();
            format!(
                "converted {} -> {} (mission: {}; {} terrain triangles, {} nodes, {} materials, {} textures; libraries: {}){}",
                r.source,
                r.output.as_deref().unwrap_or("?"),
                r.notes.first().map_or("?", String::as_str),
                c.triangles,
                c.nodes,
                c.materials,
                c.textures,
                r.libraries_text(),
                warning_count(r)
            )
        }
        Status::Converted => {
            let c = r.counts.clone().unwrap_or_default();
            format!(
                "converted {} -> {} ({} nodes, {} vertices, {} triangles, {} batches, {} animated nodes, {} frames, {} materials, {} textures; libraries: {}; {} conventions: {}){}",
                r.source,
                r.output.as_deref().unwrap_or("?"),
                c.nodes,
                c.vertices,
                c.triangles,
                c.batches,
                c.animated_nodes,
                c.frame_count,
                c.materials,
                c.textures,
                r.libraries_text(),
                r.conventions.as_ref().map_or("?", |d| d.label()),
                r.conventions.as_ref().map_or_else(String::new, |d| d.summary()),
                warning_count(r)
            )
        }
        Status::Skipped => format!(
            "skipped {}: {}",
            r.source,
            r.reason.as_deref().unwrap_or("")
        ),
        Status::Failed => format!("error: {}", r.errors.join("; ")),
    };
    if with_warnings {
        for w in &r.warnings {
            s.push_str(&format!("\n  warning: {w}"));
        }
    }
    s
}
