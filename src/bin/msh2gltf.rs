//! `msh2gltf`: convert Parkan: Iron Strategy MSH models to glTF 2.0.
//!
//! Exit codes: 0 everything converted (skips are fine), 1 a model failed
//! (the others were still converted), 2 usage or environment error.
//! The run lives in the library ([`mshgltf::msh2gltf`]).

use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::Parser;
use mshgltf::msh2gltf::{self, Args, Listing};
use mshgltf::output;

fn main() -> ExitCode {
    output::install_signal_cleanup();
    let cli = match Args::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let _ = e.print();
            return ExitCode::from(if e.use_stderr() { 2 } else { 0 });
        }
    };
    match run(&cli) {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            eprintln!("msh2gltf: error: {e:#}");
            ExitCode::from(msh2gltf::exit_code(e.as_ref()))
        }
    }
}

/// One mode: `--list`, or the conversion run.
fn run(cli: &Args) -> Result<u8> {
    if cli.list {
        cli.validate()?;
        return print_listing(&cli.input, msh2gltf::list(&cli.input, cli.max_work)?);
    }
    Ok(msh2gltf::run(cli)?)
}

/// `--list`: the listing as one JSON line on stdout (a closed pipe, as
/// with `| head`, ends it quietly), or a message when INPUT holds no models.
fn print_listing(input: &str, listing: Listing) -> Result<u8> {
    let json = match listing {
        Listing::Models(json) => json,
        Listing::Nothing(other) => {
            eprintln!("msh2gltf: {input}: no models to list ({other:?})");
            return Ok(1);
        }
    };
    use std::io::Write;
    match writeln!(std::io::stdout().lock(), "{json}") {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
            Err(e).context("cannot write the listing")
        }
        _ => Ok(0),
    }
}
