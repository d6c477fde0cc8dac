//! `--game-dir` when authoring: the new materials (MAT0), textures and
//! lightmap (Texm) added to copies of the game's Material.lib,
//! Textures.lib and LightMap.lib beside the output, or to the libraries
//! themselves with `--in-place`.

use std::path::{Path, PathBuf};

use super::{claim, conversion, output_fail, read_input, usage, Args, RunError};
use crate::convention::TexmOrder;
use crate::gltf_import;
use crate::material::write::{add_entries, LibraryEdit};
use crate::output::{self, Transaction};
use crate::source::file_any_case;

/// `--game-dir`: stages the new Material.lib, Textures.lib and LightMap.lib
/// in `txn` and returns (path, edit) of each. With --in-place the game's
/// libraries are opened for update (locked until the commit) and one is
/// rewritten only when entries are added to it; otherwise they are inputs
/// and the copies go beside the output.
pub(super) fn author_libraries(
    cli: &Args,
    game: &Path,
    doc: &gltf_import::GltfFile,
    a: &gltf_import::Authored,
    out: &Path,
    txn: &mut Transaction,
    warnings: &mut Vec<String>,
) -> Result<Vec<(PathBuf, LibraryEdit)>, RunError> {
    use crate::gltf_import::materials::{self, TextureBits, TextureOptions};
    use crate::material::library::{LIGHTMAP_LIB, MATERIAL_LIB, TEXTURES_LIB};
    let opts = TextureOptions {
        bits: match cli.texture_bits.as_str() {
            "16" => TextureBits::Sixteen,
            "32" => TextureBits::ThirtyTwo,
            _ => TextureBits::Auto,
        },
        max_size: cli.max_texture,
        order: if cli.texm_order == "argb" {
            TexmOrder::Argb
        } else {
            TexmOrder::Retail
        },
        max_work: cli.max_work,
        allow_outside: cli.allow_outside,
    };
    let content = materials::library_content(doc, cli.input.parent(), &a.wear, &opts)
        .map_err(|e| conversion(format!("{}: {e}", cli.input.display())))?;
    warnings.extend(content.warnings.iter().cloned());
    let out_dir = match out.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let mut res = Vec::new();
    for (file, entries) in [
        (MATERIAL_LIB, content.material_entries()),
        (TEXTURES_LIB, content.texture_entries()),
        (LIGHTMAP_LIB, content.lightmap_entries()),
    ] {
        let src = file_any_case(game, file);
        let (target, old) = if cli.in_place {
            if entries.is_empty() {
                // Nothing to add: the game's file is not touched.
                continue;
            }
            let t = src.clone().unwrap_or_else(|| game.join(file));
            let old = txn.open_for_update(&t).map_err(|e| match e {
                e @ (output::OutputError::IsInput(_) | output::OutputError::Collision(..)) => {
                    usage(format!("--in-place {file}: {e}"))
                }
                e => output_fail(e),
            })?;
            (t, old)
        } else {
            let t = file_any_case(&out_dir, file).unwrap_or_else(|| out_dir.join(file));
            if src.as_ref().is_some_and(|s| output::same_file(s, &t)) {
                return Err(usage(format!(
                    "the new {file} would replace {} in the game folder: add --in-place, or write the model to another folder with -o",
                    t.display()
                )));
            }
            let old = match &src {
                Some(p) => {
                    txn.add_input(p);
                    Some(read_input(p, "library")?)
                }
                None => None,
            };
            if old.is_none() && entries.is_empty() {
                continue;
            }
            claim(txn, &t, " (write the model to another folder with -o)")?;
            (t, old)
        };
        let label = src
            .as_ref()
            .map_or_else(|| file.to_string(), |p| p.display().to_string());
        let (bytes, edit) = add_entries(&label, old.as_deref(), &entries, cli.replace_entries)
            .map_err(|e| usage(e.to_string()))?;
        txn.stage(&target, bytes).map_err(output_fail)?;
        res.push((target, edit));
    }
    Ok(res)
}
