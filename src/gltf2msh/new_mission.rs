//! `gltf2msh --new-mission DIR --template MISSION --map MAP --name TITLE`
//! (issue 38 item 2; mission-notes §8.7 "Without a base", §1.1, §5.5):
//! a new mission folder from a template.
//!
//! Without a glTF: DIR gets the starting mission
//! ([`crate::mission::new::starting`]: the template's versions, the map,
//! the template's player and first enemy clan with bases on the new map, no
//! objects, routes or lodes) as `data.tma`, `descr` = the name, and the
//! template's `mission.cfg`, `Mistips.mis`, `messages.cfg`,
//! `briefing.cfg` and `sky.*` as they are. With a glTF (`level.glb`, a
//! scene of that mission edited in Blender): the same starting mission
//! with the scene written over it by the write-back of every mission edit
//! ([`crate::mission::back::apply`]), and the player's clan must own a
//! hero ([`crate::mission::validate::hero`]) or nothing is written. Every
//! placed object is new, so each meets the ground rule of every edit
//! (mission-notes §5.4, [`crate::mission::ground::settle`] on the new
//! mission's map): `--drop-to-ground` sets it down, and without it each one
//! left more than 0.25 above or below the ground is a warning.
//!
//! DIR naming the game's `MISSIONS` folder means its next free
//! `Single.<n>` ([`crate::mission::new::next_free`]); otherwise DIR
//! itself, refused when it already holds a mission unless `--force`. Every
//! file goes through one transaction; the new `data.tma` is read back
//! strictly and exported as msh2gltf would (every record resolves, §9)
//! before the commit.

use std::path::{Path, PathBuf};

use clap::Parser;
use serde_json::{json, Value};

use super::{conversion, output_fail, usage, RunError};
use crate::gltf_import::{self, GltfFile};
use crate::mission::new::{self as newm, Extent};
use crate::mission::pipeline::game_of;
use crate::mission::validate::{self, find_in_game};
use crate::mission::{back, tma, Mission, Mode};
use crate::output::{Transaction, TxnOptions};
use crate::run::ConvertOptions;

/// Make a new Parkan mission from a template: a MISSIONS/Single.N
/// folder with the template's files, the chosen map, the player's and an
/// enemy clan with their bases and no placed objects; or, with a glTF, that
/// mission with the scene's objects, clans and routes written over it.
#[derive(Debug, Parser)]
#[command(name = "gltf2msh", version, long_about = None,
    about = "Make a new mission from a template (gltf2msh --new-mission DIR --template MISSION --map MAP --name TITLE), or write a scene over it (gltf2msh level.glb --new-mission DIR --template MISSION)",
    after_help = "Examples (in the game folder):\n  gltf2msh --new-mission MISSIONS --template MISSIONS/Single.01 --map MAPS/m01 --name \"Iron Dawn\"\n        (MISSIONS/Single.<next free n>: data.tma, descr, the template's mission.cfg, Mistips.mis, messages.cfg, briefing.cfg, sky.*)\n  gltf2msh level.glb --new-mission MISSIONS/Single.02 --template MISSIONS/Single.01 --force\n        (the scene written over the starting mission; its map and name from the scene unless --map, --name; the player's clan needs its hero)\n  gltf2msh level.glb --new-mission MISSIONS/Single.02 --template MISSIONS/Single.01 --force --drop-to-ground\n        (the same, every placed object set on the map's ground as the game places it)\n  later edits: gltf2msh level.glb --base MISSIONS/Single.02/data.tma -o edited.tma\n\nExit codes: 0 ok, 1 conversion error, 2 refused (usage, an existing folder without --force, a template without a player and an enemy clan, no hero for the player's clan).")]
pub struct NewMissionArgs {
    /// The edited scene of the new mission (.glb or .gltf); without it the
    /// starting mission is written.
    pub input: Option<PathBuf>,
    /// The new mission's folder, or the game's MISSIONS folder: then its
    /// next free Single.N (the game's menu lists Single.N in order and
    /// stops at the first without descr).
    #[arg(long, value_name = "DIR")]
    pub new_mission: PathBuf,
    /// The mission whose header, clans and files the new one starts from
    /// (its folder or its data.tma).
    #[arg(long, value_name = "MISSION")]
    pub template: PathBuf,
    /// The map folder (MAPS/NAME, holding Land.msh), as a path or
    /// relative to the game folder. Default with a glTF: the scene's map.
    #[arg(long, value_name = "MAP")]
    pub map: Option<PathBuf>,
    /// The mission's title (descr, and the description in data.tma).
    /// Default with a glTF: the scene's descr.
    #[arg(long, value_name = "TITLE")]
    pub name: Option<String>,
    /// The game folder (holding objects.rlb); default: the nearest above
    /// the template.
    #[arg(long, value_name = "GAME")]
    pub game_dir: Option<PathBuf>,
    /// Replace the files of an existing mission folder.
    #[arg(long)]
    pub force: bool,
    /// With a glTF: set every placed object on the new mission's map as
    /// the game places it (mission-notes §5.4, the rule of `--base ...
    /// --drop-to-ground`): a unit's lowest vertex on the terrain, scenery
    /// at its origin's offset above the ground (0 for a record the
    /// mission places nowhere else), a building on the mean ground of its
    /// .bas outer ring (kept where it is when its start flag is set); units
    /// inside buildings are not touched. Without it nothing is moved, and a
    /// warning names each object left more than 0.25 above or below the
    /// ground. Either way the --report's `ground` rows give each object's
    /// z and the rule's.
    #[arg(long, requires = "input")]
    pub drop_to_ground: bool,
    /// Print nothing but errors.
    #[arg(short, long)]
    pub quiet: bool,
    /// Write a JSON report of the run to this file.
    #[arg(long, value_name = "FILE.json")]
    pub report: Option<PathBuf>,
    /// Also read buffer URIs that are absolute or lead outside the glTF's
    /// folder.
    #[arg(long)]
    pub allow_outside: bool,
    /// Work budget (units, see README "Safety").
    #[arg(long, value_name = "UNITS", default_value_t = crate::limits::DEFAULT_MAX_WORK)]
    pub max_work: u64,
}

impl NewMissionArgs {
    /// Whether `args` (the process's, program name first) ask for
    /// `--new-mission`: then they are parsed as [`NewMissionArgs`].
    pub fn asked(args: &[std::ffi::OsString]) -> bool {
        args.iter().skip(1).any(|a| {
            a.to_str()
                .is_some_and(|a| a == "--new-mission" || a.starts_with("--new-mission="))
        })
    }
}

/// What the run found before it writes.
struct Plan {
    game: PathBuf,
    template: Mission,
    template_files: Vec<(String, PathBuf)>,
    map_path: String,
    extent: Extent,
    name: String,
    dir: PathBuf,
    warnings: Vec<String>,
}

/// Runs `--new-mission` (module docs) and writes `--report` (also after a
/// failure).
///
/// # Errors
/// [`RunError::Usage`] (exit 2): missing template, game folder, map or
/// name, an existing folder without `--force`, a template without a
/// player and an enemy clan, a name Windows-1251 cannot hold, no hero for
/// the player's clan (`mission.hero`); [`RunError::Conversion`] (exit 1):
/// a glTF that cannot be written over the mission, or a result that breaks
/// a §9 rule.
pub fn run(args: &NewMissionArgs) -> Result<(), RunError> {
    crate::limits::check_work(args.max_work).map_err(|e| usage(format!("--max-work: {e}")))?;
    let mut txn = Transaction::new(TxnOptions::from_env(args.force));
    if let Some(r) = &args.report {
        txn.claim(r).map_err(|e| usage(format!("--report: {e}")))?;
    }
    let res = run_planned(args, &mut txn);
    if let Some(p) = &args.report {
        let v = match &res {
            Ok(r) => json!({"ok": true, "input": args.input, "import": r}),
            Err(e) => json!({"ok": false, "input": args.input, "exit_code": e.exit_code(),
                             "error": e.to_string()}),
        };
        let mut t = Transaction::new(txn.options().clone());
        let text = serde_json::to_vec_pretty(&v).unwrap_or_default();
        if let Err(e) = t.stage(p, text).and_then(|()| t.commit().map(|_| ())) {
            eprintln!("gltf2msh: report {}: {e}", p.display());
        }
    }
    res.map(|_| ())
}

fn run_planned(args: &NewMissionArgs, txn: &mut Transaction) -> Result<Value, RunError> {
    let doc = match &args.input {
        Some(p) => Some(load_scene(args, p, txn)?),
        None => None,
    };
    let json = doc.as_ref().map(GltfFile::to_json);
    let plan = plan(args, txn, json.as_ref())?;
    let start = newm::starting(&plan.template, &plan.map_path, plan.extent, &plan.name)
        .map_err(|e| usage(format!("{e}")))?;
    let tma_path = plan.dir.join(crate::mission::pipeline::TMA);
    let up = match &json {
        Some(j) => back::conventions_up(j).map_err(|e| conversion(e.to_string()))?,
        None => crate::convention::Up::default(),
    };
    let opts = ConvertOptions {
        up,
        mode: crate::msh::read::Mode::Tolerant,
        textures: false,
        max_work: args.max_work,
        ..Default::default()
    };
    let mut warnings = plan.warnings.clone();
    let (mut added, mut layers) = (0, 0);
    let mut ground_rows = Vec::new();
    let mission = match &doc {
        None => start,
        Some(doc) => {
            let input = args.input.as_deref().unwrap_or(Path::new("")).display();
            let reference = super::mission::scene_of(txn, &tma_path, &start, &plan.game, &opts)
                .map_err(|e| conversion(format!("the starting mission: {e}")))?;
            let mut w = back::apply(doc, &start, &reference)
                .map_err(|e| conversion(format!("{input}: {e}")))?;
            let heroless = validate::hero(&w.mission, &plan.game);
            if !heroless.is_empty() {
                let all: Vec<String> = heroless.iter().map(ToString::to_string).collect();
                return Err(usage(format!(
                    "{input}: {}; nothing written",
                    all.join("; ")
                )));
            }
            // Every object is new: the ground rule of every edit (§5.4)
            // on the new mission's map.
            let g = super::mission::Grounding {
                reference: &reference,
                edited: doc,
                up,
                game: &plan.game,
                drop: args.drop_to_ground,
                quiet: args.quiet,
            };
            ground_rows = super::mission::settle_on_ground(&g, txn, &mut w, &start)?;
            (added, layers) = (w.added, w.layers);
            warnings.extend(w.warnings.iter().cloned());
            w.mission
        }
    };
    let bytes = tma::write(&mission);
    super::mission::check_written(txn, &tma_path, &bytes, &plan.game, &opts)
        .map_err(|e| conversion(format!("the new mission is invalid: {e}")))?;
    let files = stage_files(txn, &plan, bytes)?;
    txn.commit().map_err(output_fail)?;
    if !args.quiet {
        eprintln!(
            "gltf2msh: new mission {} ({:?} on {}): {}; {} clans, {} placed objects{}, {} routes{}",
            plan.dir.display(),
            plan.name,
            plan.map_path,
            files.join(", "),
            mission.clans.len(),
            mission.objects.len(),
            super::mission::ground_clause(&ground_rows),
            mission.routes.len(),
            super::mission::warnings_clause(warnings.len())
        );
        for w in &warnings {
            eprintln!("{}", super::console::warning_line(w));
        }
    }
    Ok(
        json!({"kind": "new_mission", "folder": plan.dir, "name": plan.name,
              "map_path": plan.map_path, "files": files, "clans": mission.clans.len(),
              "objects": mission.objects.len(), "routes": mission.routes.len(),
              "added": added, "layers": layers,
              "set_on_ground": super::mission::set_count(&ground_rows), "ground": ground_rows,
              "warnings": warnings}),
    )
}

/// The glTF, read with its buffers (inputs of `txn`) and checked against
/// the mission budget.
fn load_scene(
    args: &NewMissionArgs,
    p: &Path,
    txn: &mut Transaction,
) -> Result<GltfFile, RunError> {
    super::check_input(p)?;
    txn.add_input(p);
    let read = gltf_import::ReadOptions {
        allow_outside: args.allow_outside,
        max_work: args.max_work,
    };
    let (doc, files) = gltf_import::load_path_with(p, &read)
        .map_err(|e| conversion(format!("{}: {e}", p.display())))?;
    for f in &files {
        txn.add_input(f);
    }
    back::check_budget(&doc, args.max_work)
        .map_err(|e| conversion(format!("{}: {e}", p.display())))?;
    Ok(doc)
}

/// The template, game folder, map, name and destination (module docs).
fn plan(
    args: &NewMissionArgs,
    txn: &mut Transaction,
    doc: Option<&Value>,
) -> Result<Plan, RunError> {
    let t = &args.template;
    let tma = if t.is_dir() {
        crate::source::tma_in(t)
            .ok_or_else(|| usage(format!("--template {}: no data.tma in it", t.display())))?
    } else {
        t.clone()
    };
    let bytes = super::read_input(&tma, "--template")?;
    txn.add_input(&tma);
    let mut budget = crate::limits::Budget::new(args.max_work);
    let (template, _) = tma::read_counted(&bytes, Mode::Tolerant, &mut budget)
        .map_err(|e| usage(format!("--template {}: {e}", tma.display())))?;
    let game = game_of(&tma, args.game_dir.as_deref()).ok_or_else(|| {
        usage(format!(
            "--template {}: no objects.rlb in the folders above it (pass --game-dir)",
            tma.display()
        ))
    })?;
    let tdir = tma.parent().unwrap_or(Path::new(".")).to_path_buf();
    let template_files = newm::template_files(&tdir);
    for (_, f) in &template_files {
        txn.add_input(f);
    }
    let mission_ex = match doc {
        Some(d) => {
            let scenes = d["scenes"].as_array().map_or(0, Vec::len);
            let s = crate::gltf_import::read::refs::default_scene(d, scenes)
                .map_err(|e| conversion(e.to_string()))?;
            Some(d["scenes"][s]["extras"][crate::mission::extras::MISSION_KEY].clone())
        }
        None => None,
    };
    let (map_path, land) = map_of(args, &game, mission_ex.as_ref())?;
    let extent = land_extent(txn, &land, args.max_work)?;
    let name = match (&args.name, mission_ex.as_ref().map(|m| &m["descr"])) {
        (Some(n), _) => n.clone(),
        (None, Some(Value::String(d))) => d.clone(),
        _ => {
            return Err(usage(
                "--name: the new mission's title (shown in the game's menu) is required",
            ))
        }
    };
    let (dir, mut warnings) = destination(args)?;
    if !in_missions(&game, &dir) {
        warnings.push(format!(
            "{}: not a MISSIONS/Single.<n> folder of the game folder {}: the game's menu lists MISSIONS/Single.<n> only (mission-notes §1.1)",
            dir.display(),
            game.display()
        ));
    }
    Ok(Plan {
        game,
        template,
        template_files,
        map_path,
        extent,
        name,
        dir,
        warnings,
    })
}

/// The map path and the map's Land.msh: from `--map` (a folder, as given
/// or under the game folder, inside the game folder) or the scene's
/// `map_path`.
fn map_of(
    args: &NewMissionArgs,
    game: &Path,
    mission_ex: Option<&Value>,
) -> Result<(String, PathBuf), RunError> {
    let land_in = |dir: &Path| {
        find_in_game(dir, "Land.msh").ok_or_else(|| {
            usage(format!(
                "--map {}: no Land.msh in it (a map folder is MAPS/<name>)",
                dir.display()
            ))
        })
    };
    if let Some(m) = &args.map {
        let dir = if m.is_dir() {
            m.clone()
        } else {
            find_in_game(game, &m.to_string_lossy()).ok_or_else(|| {
                usage(format!(
                    "--map {}: no such folder (as given, or under {})",
                    m.display(),
                    game.display()
                ))
            })?
        };
        let canon = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
        let rel = canon(&dir)
            .strip_prefix(canon(game))
            .map(Path::to_path_buf)
            .map_err(|_| {
                usage(format!(
                    "--map {}: not inside the game folder {} (a mission names its map by a game path)",
                    m.display(),
                    game.display()
                ))
            })?;
        let parts: Vec<String> = rel
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect();
        let parts: Vec<&str> = parts.iter().map(String::as_str).collect();
        return Ok((newm::map_path_of(&parts), land_in(&dir)?));
    }
    let Some(Value::String(map)) = mission_ex.map(|m| &m["map_path"]) else {
        return Err(usage(
            "--map: the new mission's map folder (MAPS/<name>) is required",
        ));
    };
    let dir = validate::map_dir(map)
        .and_then(|d| find_in_game(game, &d))
        .ok_or_else(|| {
            usage(format!(
                "the scene's map {map:?} is not under {} (pass --map)",
                game.display()
            ))
        })?;
    Ok((map.clone(), land_in(&dir)?))
}

/// The XY extent of the map `land` (its Land.msh, an input of `txn`).
fn land_extent(txn: &mut Transaction, land: &Path, max_work: u64) -> Result<Extent, RunError> {
    use crate::terrain::{source::TerrainSource, Mode as TMode};
    let src = TerrainSource::load_within(land, TMode::Tolerant, None, max_work)
        .map_err(|e| conversion(format!("map {}: {e}", land.display())))?;
    for f in &src.inputs {
        txn.add_input(f);
    }
    txn.add_input(land);
    Extent::of_land(&src.land).ok_or_else(|| {
        conversion(format!(
            "map {}: no finite vertex positions: the map has no extent to place the clan bases on",
            land.display()
        ))
    })
}

/// The folder to write (module docs) and the warnings of the choice.
fn destination(args: &NewMissionArgs) -> Result<(PathBuf, Vec<String>), RunError> {
    let d = &args.new_mission;
    if d.is_dir() && newm::is_missions_folder(d) {
        return newm::next_free(d).map_err(|e| usage(e.to_string()));
    }
    if d.exists() && !d.is_dir() {
        return Err(usage(format!(
            "--new-mission {}: not a folder",
            d.display()
        )));
    }
    let holds = |n: &str| find_in_game(d, n).is_some();
    if !args.force && (holds("data.tma") || holds("descr")) {
        return Err(usage(format!(
            "--new-mission {}: already a mission (data.tma or descr in it): give another folder, the MISSIONS folder (the next free Single.<n>), or --force to replace its files",
            d.display()
        )));
    }
    Ok((d.clone(), Vec::new()))
}

/// True when `dir` is `MISSIONS/<x>` of `game` (its parent is the game's
/// MISSIONS folder, whether `dir` exists yet or not).
fn in_missions(game: &Path, dir: &Path) -> bool {
    let canon = |p: &Path| std::fs::canonicalize(p).ok();
    let parent = dir.parent().filter(|p| !p.as_os_str().is_empty());
    let parent = canon(parent.unwrap_or(Path::new(".")));
    let missions = find_in_game(game, "MISSIONS").and_then(|m| canon(&m));
    let single = dir.file_name().is_some_and(|n| {
        let n = n.to_string_lossy().to_ascii_lowercase();
        n.strip_prefix("single.")
            .is_some_and(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()))
    });
    single && parent.is_some() && parent == missions
}

/// Stages `data.tma`, `descr` and the template's copied files into the
/// new folder; returns their names.
fn stage_files(
    txn: &mut Transaction,
    plan: &Plan,
    tma_bytes: Vec<u8>,
) -> Result<Vec<String>, RunError> {
    let mut names = Vec::new();
    let mut put = |txn: &mut Transaction, name: &str, bytes: Vec<u8>| {
        // An existing file of another case is the one the game reads.
        let path = find_in_game(&plan.dir, name).unwrap_or_else(|| plan.dir.join(name));
        txn.stage(&path, bytes).map_err(|e| {
            let hint = match e {
                crate::output::OutputError::Exists(_) => " (give --force to replace it)",
                _ => "",
            };
            usage(format!("{e}{hint}"))
        })?;
        names.push(name.to_string());
        Ok::<(), RunError>(())
    };
    put(txn, crate::mission::pipeline::TMA, tma_bytes)?;
    let mut descr = newm::name_bytes(&plan.name).map_err(|e| usage(format!("{e}")))?;
    descr.extend_from_slice(b"\r\n");
    put(txn, "descr", descr)?;
    for (name, path) in &plan.template_files {
        let bytes = super::read_input(path, "template file")?;
        put(txn, name, bytes)?;
    }
    Ok(names)
}
