//! The Neovim set-up of docs/editors.md, run as a user runs it: a
//! headless Neovim loads the doc's `lua` block as its `init.lua` (so the doc
//! cannot drift from what is tested), with the freshly built `arrayflow` first
//! on `PATH`, and `tests/data/neovim.lua` drives it: a `.loop` fixture and a
//! `.c` file opened, diagnostics, code lenses (brought by the config's own
//! refresh), hover, definition, code actions, the expansion applied, an edit
//! that makes an error. The script writes what it saw as JSON; this file
//! checks it against the paper's Example 1 (sources of R's read of x: T and S).
//!
//! Neovim: every binary in `ARRAYFLOW_NVIM` (separated by `:`), else `nvim`
//! on `PATH`. `.ci/run` installs Debian's (0.7.2 on Debian 12) and 0.11.4. When
//! none is found the test fails under `CI=true` and is skipped elsewhere, with
//! the reason printed. Each run is bounded: the script's waits time out and
//! the process is killed after `LIMIT`, so a broken server fails the test.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_arrayflow");
const ROOT: &str = env!("CARGO_MANIFEST_DIR");
/// The longest one Neovim run may take.
const LIMIT: Duration = Duration::from_secs(50);
/// The script's wait for each event.
const WAIT_MS: u64 = 8_000;

/// The first ```lua block under the Neovim heading of docs/editors.md.
fn doc_config() -> String {
    let doc = std::fs::read_to_string(format!("{ROOT}/docs/editors.md")).unwrap();
    let section = &doc[doc.find("## Neovim").expect("a Neovim section")..];
    let start = section.find("```lua\n").expect("a lua block") + "```lua\n".len();
    let end = start + section[start..].find("```").expect("the block's end");
    section[start..end].to_string()
}

/// The Neovim binaries to test with, or why there is none.
fn neovims() -> Result<Vec<String>, String> {
    if let Ok(list) = std::env::var("ARRAYFLOW_NVIM") {
        let v: Vec<String> = list
            .split(':')
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .collect();
        for n in &v {
            if !Path::new(n).is_file() && which(n).is_none() {
                return Err(format!("ARRAYFLOW_NVIM names `{n}`, which is not there"));
            }
        }
        return Ok(v);
    }
    match which("nvim") {
        Some(_) => Ok(vec!["nvim".to_string()]),
        None => Err("no `nvim` on PATH (and ARRAYFLOW_NVIM is not set)".to_string()),
    }
}

fn which(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

/// `(line, character)` of `needle`'s first occurrence, plus `skip`.
fn pos(text: &str, needle: &str, skip: usize) -> (usize, usize) {
    let at = text.find(needle).expect("needle") + skip;
    let line = text[..at].matches('\n').count();
    (line, at - text[..at].rfind('\n').map_or(0, |k| k + 1))
}

fn line_of(text: &str, needle: &str) -> usize {
    pos(text, needle, 0).0
}

/// Runs one Neovim against the server and returns what the script observed.
fn drive(nvim: &str, dir: &Path, loop_text: &str, c_text: &str) -> Value {
    let loop_path = dir.join("example1.loop");
    let c_path = dir.join("example1.c");
    std::fs::write(&loop_path, loop_text).unwrap();
    std::fs::write(&c_path, c_text).unwrap();
    std::fs::write(dir.join("init.lua"), doc_config()).unwrap();
    let spec = serde_json::json!({
        "wait_ms": WAIT_MS,
        "apply_title": "Apply maximal static expansion",
        "loop": {
            "path": loop_path,
            "min_diagnostics": 2,
            "hover": pos(loop_text, "R: use(x)", 7),
            "definition": pos(loop_text, "R: use(x)", 7),
        },
        "c": {
            "path": c_path,
            "min_diagnostics": 1,
            "hover": pos(c_text, "R: use(x)", 7),
            "definition": pos(c_text, "R: use(x)", 7),
        },
        // An array that is not declared: an error the server must publish.
        "broken_lines": ["param N = 5;", "for i = 1 to N do", "  S: y[i] = 1;", "end"],
    });
    let spec_path = dir.join("spec.json");
    std::fs::write(&spec_path, spec.to_string()).unwrap();
    let out_path = dir.join("out.json");
    let bin_dir = Path::new(BIN).parent().unwrap();
    let path = std::env::join_paths(std::iter::once(bin_dir.to_path_buf()).chain(
        std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()),
    ))
    .unwrap();
    let script = format!("{ROOT}/tests/data/neovim.lua");
    let mut child = Command::new(nvim)
        .args(["--headless", "-n", "-i", "NONE", "-u"])
        .arg(dir.join("init.lua"))
        .arg("-c")
        .arg(format!("luafile {script}"))
        .current_dir(dir)
        .env("PATH", path)
        .env("HOME", dir)
        .env("XDG_CONFIG_HOME", dir.join("config"))
        .env("XDG_DATA_HOME", dir.join("data"))
        .env("XDG_STATE_HOME", dir.join("state"))
        .env("XDG_CACHE_HOME", dir.join("cache"))
        .env("ARRAYFLOW_NVIM_SPEC", &spec_path)
        .env("ARRAYFLOW_NVIM_OUT", &out_path)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run `{nvim}`: {e}"));
    let start = Instant::now();
    loop {
        if child.try_wait().unwrap().is_some() {
            break;
        }
        if start.elapsed() > LIMIT {
            let _ = child.kill();
            let _ = child.wait();
            panic!("`{nvim}` did not finish in {LIMIT:?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let mut stderr = String::new();
    if let Some(mut e) = child.stderr.take() {
        use std::io::Read;
        let _ = e.read_to_string(&mut stderr);
    }
    let text = std::fs::read_to_string(&out_path)
        .unwrap_or_else(|e| panic!("`{nvim}` wrote no observations ({e}); stderr:\n{stderr}"));
    let v: Value = serde_json::from_str(&text).unwrap();
    eprintln!("{nvim}: {v:#}");
    v
}

fn lines(v: &Value) -> Vec<u64> {
    let mut l: Vec<u64> = v
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_u64().unwrap())
        .collect();
    l.sort();
    l
}

fn check_step(step: &Value, text: &str, what: &str) {
    assert_eq!(step["attached"], true, "{what}: the server never attached");
    let diags = step["diagnostics"].as_array().unwrap();
    assert!(
        diags
            .iter()
            .any(|d| d["message"].as_str().unwrap().contains("loop i")),
        "{what}: no remark on loop i: {diags:?}"
    );
    // Example 1's loop i: not parallel as written, parallel after expanding x.
    let lenses = step["lenses"].as_array().unwrap();
    let for_i = line_of(text, "for ") as u64;
    assert!(
        lenses.iter().any(|l| l["line"] == for_i
            && l["title"]
                .as_str()
                .unwrap()
                .starts_with("parallel: no → yes after expansion")),
        "{what}: no lens on loop i (line {for_i}): {lenses:?}"
    );
    // R's read of x: its sources are T and S (the paper's Figure 1).
    let hover = step["hover"].as_str().unwrap();
    assert!(
        hover.contains("T[i]") && hover.contains("S["),
        "{what}: hover {hover}"
    );
    let mut want = vec![line_of(text, "T: x") as u64, line_of(text, "S: x") as u64];
    want.sort();
    assert_eq!(lines(&step["definition"]), want, "{what}: definition");
    let actions: Vec<&str> = step["actions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    assert_eq!(
        actions,
        ["Apply maximal static expansion", "Show expansion summary"],
        "{what}"
    );
}

#[test]
fn the_documented_neovim_config_drives_the_server() {
    let nvims = match neovims() {
        Ok(v) => v,
        Err(why) => {
            if std::env::var("CI").is_ok_and(|v| v == "true") {
                panic!("CI must test the editor set-up: {why} (.ci/run installs Neovim)");
            }
            eprintln!("skipped: {why}");
            return;
        }
    };
    let loop_text =
        std::fs::read_to_string(format!("{ROOT}/fixtures/papers/mse-example1.loop")).unwrap();
    let c_text = std::fs::read_to_string(format!("{ROOT}/fixtures/c/mse-example1.c")).unwrap();
    for nvim in &nvims {
        let dir = std::env::temp_dir().join(format!(
            "arrayflow-neovim-{}-{}",
            std::process::id(),
            nvim.replace('/', "_")
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let v = drive(nvim, &dir, &loop_text, &c_text);
        let _ = std::fs::remove_dir_all(&dir);
        assert!(v.get("error").is_none(), "{nvim}: the script failed: {v}");
        let steps = v["steps"].as_array().unwrap();
        assert_eq!(steps.len(), 2, "{nvim}: {v}");
        let (l, c) = (&steps[0], &steps[1]);
        assert_eq!(l["filetype"], "arrayflow");
        assert_eq!(c["filetype"], "c");
        check_step(l, &loop_text, &format!("{nvim} on the .loop file"));
        check_step(c, &c_text, &format!("{nvim} on the C file"));
        // The expansion applied: x becomes an array indexed by i.
        let applied = l["applied"].as_str().unwrap_or_default();
        assert!(
            applied.contains("x_1[i]") || applied.contains("x[i]"),
            "{nvim}: the expansion was not applied: {l}"
        );
        // The edit's error, at the line of the undeclared array.
        assert_eq!(l["error_seen"], true, "{nvim}: {l}");
        let after = l["after_edit"].as_array().unwrap();
        assert!(
            after.iter().any(|d| d["severity"] == 1
                && d["line"] == 2
                && d["message"].as_str().unwrap().contains('y')),
            "{nvim}: {after:?}"
        );
    }
}
