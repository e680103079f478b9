//! `break` in `.loop` (fixtures/loops/break.loop): the interpreter's final
//! values are the ones worked out by hand in the file's header, and the
//! program is equivalent to break.flags.loop, the same program with each
//! `break` written out as a flag by hand (and not to one with a `break`
//! moved).

mod support;

const FILE: &str = "fixtures/loops/break.loop";

/// The final value of each cell of `name` in `run --format json`'s output.
fn cells(run: &serde_json::Value, name: &str) -> Vec<i64> {
    let array = (run["arrays"].as_array().into_iter().flatten())
        .find(|a| a["name"] == name)
        .unwrap_or_else(|| panic!("no array `{name}` in the run"));
    (array["cells"].as_array().into_iter().flatten())
        .map(|c| c["value"].as_i64().expect("an integer value"))
        .collect()
}

#[test]
fn break_leaves_the_innermost_loop_with_the_values_worked_out_by_hand() {
    let (code, out, err) = support::run(&["run", FILE, "--format", "json", "--max-trips", "16"]);
    assert_eq!(code, 0, "{err}");
    let run: serde_json::Value = serde_json::from_str(&out).expect("run --format json");
    assert_eq!(cells(&run, "a"), [0, 5, 3, 1, 6, 4, 2, 0]);
    assert_eq!(cells(&run, "first"), [4]);
    assert_eq!(cells(&run, "total"), [9]);
    assert_eq!(cells(&run, "row"), [2, 1, 0, 2]);
    assert_eq!(cells(&run, "count"), [3]);
    assert_eq!(cells(&run, "b"), cells(&run, "a"));
}

#[test]
fn break_is_the_flags_written_out_by_hand() {
    let flags = "fixtures/loops/break.flags.loop";
    // The flags are temporaries of each program, named by each its way.
    let live = [
        "--max-trips",
        "16",
        "--live-out",
        "a,b,row,first,total,count",
    ];
    let mut args = vec!["equiv", FILE, flags];
    args.extend(live);
    let (code, out, err) = support::run(&args);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(out.contains("equivalent"), "{out}");
    // A `break` moved after the statement it skips is another program.
    let moved = std::fs::read_to_string(FILE).unwrap().replace(
        "    break;\n  end\n  total += a[i];",
        "  end\n  total += a[i];\n  if a[i] > 5 then break; end",
    );
    let dir = std::env::temp_dir().join(format!("arrayflow-break-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("moved.loop");
    std::fs::write(&path, moved).unwrap();
    let p = path.to_string_lossy();
    let mut args = vec!["equiv", &p, flags];
    args.extend(live);
    let (code, _, _) = support::run(&args);
    std::fs::remove_dir_all(&dir).ok();
    assert_ne!(code, 0, "a `break` after the sum still equivalent");
}
