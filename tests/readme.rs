//! README.md stays true: every `arrayflow ...` command line it shows runs
//! with exit 0 on the shipped examples, and installing uses `--locked` (the
//! versions in Cargo.lock, the ones the tests ran with).

const BIN: &str = env!("CARGO_BIN_EXE_arrayflow");

fn readme() -> String {
    std::fs::read_to_string("README.md").expect("README.md")
}

/// The indented command lines of README.md that start with `arrayflow `.
fn commands(readme: &str) -> Vec<Vec<String>> {
    readme
        .lines()
        .filter_map(|l| l.strip_prefix("    arrayflow "))
        .map(|l| l.split_whitespace().map(str::to_string).collect())
        .collect()
}

#[test]
fn install_uses_the_lock_file() {
    let r = readme();
    assert!(
        r.contains("    cargo install --locked --path ."),
        "README.md"
    );
    assert!(!r.contains("    cargo install --path"), "README.md");
}

#[test]
fn every_command_shown_runs() {
    let cmds = commands(&readme());
    assert!(cmds.len() >= 8, "README.md shows {} commands", cmds.len());
    let out = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("readme-plot.svg");
    for cmd in cmds {
        // The server waits on stdin: `tests/lsp.rs` covers it.
        if cmd[0] == "lsp" {
            continue;
        }
        // Pictures go to the scratch directory, not the checkout.
        let args: Vec<String> = cmd
            .iter()
            .map(|a| {
                if a.ends_with(".svg") {
                    out.to_string_lossy().into_owned()
                } else {
                    a.clone()
                }
            })
            .collect();
        let o = std::process::Command::new(BIN)
            .args(&args)
            .output()
            .expect("run arrayflow");
        assert!(
            o.status.success(),
            "`arrayflow {}` failed: {}",
            cmd.join(" "),
            String::from_utf8_lossy(&o.stderr)
        );
        assert!(
            !o.stdout.is_empty() || cmd[0] == "check" || cmd[0] == "plot",
            "{cmd:?}"
        );
    }
}
