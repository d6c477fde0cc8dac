//! `--base MISSIONS/<…>/data.tma`: a mission scene written back over the
//! mission it was exported from ([`crate::mission::back::apply`],
//! mission-notes §8.7). Unedited: the base's bytes.

use std::path::Path;

use super::{claim, conversion, load_doc, output_fail, Args, RunError};
use crate::mission::{back, tma, Mode};
use crate::output::Transaction;

/// Writes `-o` (default: the input with `.tma`) from the glTF's objects
/// over the base mission `base_path` (bytes `base_bytes`), checked by the
/// strict reader before it is committed. Returns the report's `import`
/// object.
///
/// # Errors
/// [`RunError::Conversion`]: the base does not read, the glTF is not a
/// mission or names a node it cannot write (`mission.node`), or the result
/// breaks a §9 rule; [`RunError::Usage`]: the output is refused.
pub(super) fn edit_mission(
    cli: &Args,
    txn: &mut Transaction,
    base_path: &Path,
    base_bytes: &[u8],
) -> Result<serde_json::Value, RunError> {
    let out = cli
        .output
        .clone()
        .unwrap_or_else(|| cli.input.with_extension("tma"));
    txn.add_input(base_path);
    // The text files beside the base are the mission's too (issue 36 item 1).
    for f in crate::mission::pipeline::text_file_paths(base_path) {
        txn.add_input(&f);
    }
    let (doc, _) = load_doc(cli, txn)?;
    claim(txn, &out, " (choose another output with -o)")?;
    let (base, _) = tma::read(base_bytes, Mode::Tolerant)
        .map_err(|e| conversion(format!("base {}: {e}", base_path.display())))?;
    let w = back::apply(&doc.to_json(), &base)
        .map_err(|e| conversion(format!("{}: {e}", cli.input.display())))?;
    let bytes = tma::write(&w.mission);
    tma::read(&bytes, Mode::Strict)
        .map_err(|e| conversion(format!("the edited mission is invalid: {e}")))?;
    // "unchanged" only when nothing differs: a difference not written (a
    // moved route, a kind 0/1 scale) is a warning, and then not unchanged.
    let unchanged = bytes == base_bytes && w.warnings.is_empty();
    let n_bytes = bytes.len();
    txn.stage(&out, bytes).map_err(output_fail)?;
    txn.commit().map_err(output_fail)?;
    if !cli.quiet {
        let what = if unchanged {
            "unchanged".to_string()
        } else {
            format!(
                "{} objects moved, {} edited, {} deleted, {} added; {} lodes and clan bases moved{}",
                w.moved,
                w.edited,
                w.deleted,
                w.added,
                w.layers,
                match w.warnings.len() {
                    0 => String::new(),
                    n => format!("; {n} warning(s): what they name is not written"),
                }
            )
        };
        eprintln!(
            "gltf2msh: wrote {} ({n_bytes} bytes; {what})",
            out.display()
        );
    }
    super::console::print_warnings(cli, &w.warnings);
    Ok(
        serde_json::json!({"kind": "mission", "unchanged": unchanged, "moved": w.moved,
        "edited": w.edited, "deleted": w.deleted, "added": w.added, "layers": w.layers,
        "warnings": w.warnings}),
    )
}
