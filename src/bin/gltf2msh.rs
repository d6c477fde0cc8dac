//! `gltf2msh`: write a glTF 2.0 scene back into a Parkan: Iron Strategy MSH
//! model, losslessly against a base model (gltf-mapping.md, "Reverse rules"),
//! or author a new model and its WEAR table from any glTF scene (no `--base`;
//! see `mshgltf::gltf_import::author`). The run lives in the library
//! ([`mshgltf::gltf2msh`]).
//!
//! Exit codes: 0 ok, 1 conversion error (mismatch, invalid result, unreadable
//! glTF), 2 usage or environment error (missing files, refused output).

use std::process::ExitCode;

use clap::Parser;
use mshgltf::gltf2msh::{self, Args, NewMissionArgs, RecoverArgs, StoreArgs};
use mshgltf::output;

fn main() -> ExitCode {
    output::install_signal_cleanup();
    let argv: Vec<std::ffi::OsString> = std::env::args_os().collect();
    let res = if StoreArgs::asked(&argv) {
        gltf2msh::store::run(&StoreArgs::parse_from(argv))
    } else if RecoverArgs::asked(&argv) {
        gltf2msh::recover(&RecoverArgs::parse_from(argv).recover)
    } else if NewMissionArgs::asked(&argv) {
        gltf2msh::new_mission::run(&NewMissionArgs::parse_from(argv))
    } else {
        gltf2msh::run(&Args::parse_from(argv))
    };
    match res {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("gltf2msh: error: {e}");
            ExitCode::from(e.exit_code())
        }
    }
}
