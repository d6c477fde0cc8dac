//! What `gltf2msh` says on stderr about a run's warnings (issue 24: every
//! difference between the glTF and what is written is a warning the user
//! sees): each warning's text on its own line, `gltf2msh: warning: TEXT`,
//! by default; `-q` silences them. The same texts are in the `--report`
//! JSON (`warnings`), which is what the Blender add-on shows.

use super::Args;

/// Prints each warning on its own line unless `-q`.
pub(super) fn print_warnings<'a>(cli: &Args, warnings: impl IntoIterator<Item = &'a String>) {
    if cli.quiet {
        return;
    }
    for w in warnings {
        eprintln!("{}", warning_line(w));
    }
}

/// One warning as printed: `gltf2msh: warning: TEXT`, a multi-line text
/// folded onto one line.
pub(super) fn warning_line(w: &str) -> String {
    let one: Vec<&str> = w.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
    format!("gltf2msh: warning: {}", one.join(" "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_warning_is_one_line() {
        assert_eq!(
            warning_line("node 3: scale ignored\n  second line"),
            "gltf2msh: warning: node 3: scale ignored second line"
        );
    }
}
