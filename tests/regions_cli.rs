//! `arrayflow regions` on fixtures/regions: the text output equals the
//! `.expected` files, each line of which was checked by hand (fig8 and
//! fig9 against lmad-digest.md §4, with its corrected F8b/F8d; guards and
//! triangle by working the loops out on paper); the JSON and isl forms of
//! Fig 9; C input; bad input gives the usual diagnostics and exit codes.

mod support;

use support::run;

#[test]
fn text_matches_the_hand_checked_fixtures() {
    let cases = [
        ("fig8", vec![]),
        ("fig9", vec![]),
        ("guards", vec![]),
        ("triangle", vec![]),
        ("triangle.N4", vec!["--param", "N=4"]),
    ];
    for (name, extra) in cases {
        let file = format!("fixtures/regions/{}.loop", name.split('.').next().unwrap());
        let mut args = vec!["regions", file.as_str()];
        args.extend(extra);
        let (code, out, err) = run(&args);
        assert_eq!(code, 0, "{name}: {err}");
        let want = std::fs::read_to_string(format!("fixtures/regions/{name}.expected")).unwrap();
        assert_eq!(out, want, "{name}");
    }
}

#[test]
fn fig9_json_and_isl() {
    let (code, out, _) = run(&["regions", "fixtures/regions/fig9.loop", "--format", "json"]);
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let secs = v["sections"].as_array().unwrap();
    assert_eq!(secs.len(), 3);
    assert_eq!(secs[0]["counter"], "i2");
    assert_eq!(secs[2]["section"], "program");
    let read = &secs[2]["arrays"][0]["read"];
    assert_eq!(read["exact"], true);
    let l = &read["lmads"][0];
    assert_eq!(l["base"], 2);
    assert_eq!(l["strides"], serde_json::json!([1, 4]));
    assert_eq!(l["spans"], serde_json::json!([2, 12]));
    // The i2 loop's write keeps the outer counter symbolic.
    assert_eq!(secs[0]["arrays"][0]["write"]["lmads"][0]["base"], "-i1 + 4");

    let (code, out, _) = run(&["regions", "fixtures/regions/fig9.loop", "--format", "isl"]);
    assert_eq!(code, 0);
    assert!(out.contains(
        "a read (exact): [] -> { a[o] : exists (k0, k1 : o = 2 + (1)*k0 + (4)*k1 \
         and 0 <= (1)*k0 <= 2 and 0 <= (4)*k1 <= 12) }"
    ));
    assert!(out.contains("# loop i2 at 15:3"));
    assert!(
        out.contains("[i1] -> { a[o] : exists (k0 : o = i1 + 2 + (4)*k0 and 0 <= (4)*k0 <= 12) }")
    );
}

#[test]
fn c_input() {
    let (code, out, err) = run(&["regions", "fixtures/c/mse-example1.c"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("loop i at "), "{out}");
    assert!(out.trim_end().lines().any(|l| l == "program:"), "{out}");
}

#[test]
fn bad_input() {
    let (code, _, err) = run(&["regions", "fixtures/errors/garbage.loop"]);
    assert_eq!(code, 1);
    assert!(err.contains("error[E"), "{err}");
    let (code, _, err) = run(&["regions", "fixtures/regions/no-such-file.loop"]);
    assert_eq!(code, 2);
    assert!(err.contains("cannot read"), "{err}");
    let (code, out, err) = run(&["regions", "fixtures/regions/fig9.loop", "--param", "K=3"]);
    assert_eq!(code, 1);
    assert!(out.is_empty());
    assert!(err.contains("E0301"), "{err}");
    let (code, _, _) = run(&["regions", "fixtures/regions/fig9.loop", "--format", "yaml"]);
    assert_eq!(code, 2);
}
