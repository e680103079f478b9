//! Modules import downwards inside each crate too: cargo refuses circles
//! between crates, and this test refuses them between the modules of one
//! crate (`crate::a::…` and `super::…` paths, outside test modules; a
//! module and its own parent or child do not count).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

type Module = Vec<String>;

/// Every `.rs` file under `src`, by module path.
fn modules(src: &Path) -> BTreeMap<Module, PathBuf> {
    let mut out = BTreeMap::new();
    let mut stack = vec![src.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "rs") {
                let rel = p.strip_prefix(src).unwrap().with_extension("");
                let mut m: Module = rel.iter().map(|c| c.to_string_lossy().into()).collect();
                if matches!(m.last().map(String::as_str), Some("mod" | "lib" | "main")) {
                    m.pop();
                }
                out.insert(m, p);
            }
        }
    }
    out
}

/// The modules `text` (the source of `m`) names by `crate::` or `super::`
/// paths: the longest prefix of each path that is a module.
fn imports(m: &Module, text: &str, mods: &BTreeMap<Module, PathBuf>) -> BTreeSet<Module> {
    let code: String = text
        .split("#[cfg(test)]\nmod tests")
        .next()
        .unwrap_or("")
        .lines()
        .map(|l| l.split("//").next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n");
    let mut out = BTreeSet::new();
    let word = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == ':';
    for (i, _) in code
        .match_indices("crate::")
        .chain(code.match_indices("super::"))
    {
        if code[..i].chars().next_back().is_some_and(word) {
            continue;
        }
        let end = code[i..]
            .find(|c: char| !word(c))
            .map_or(code.len(), |k| i + k);
        let parts: Vec<&str> = code[i..end].split("::").filter(|p| !p.is_empty()).collect();
        let mut target: Module = Vec::new();
        let mut rest = &parts[..];
        if rest.first() == Some(&"crate") {
            rest = &rest[1..];
        } else {
            target = m.clone();
            while rest.first() == Some(&"super") {
                target.pop();
                rest = &rest[1..];
            }
        }
        target.extend(rest.iter().map(|s| s.to_string()));
        let Some(t) = (1..=target.len())
            .rev()
            .map(|k| target[..k].to_vec())
            .find(|t| mods.contains_key(t))
        else {
            continue;
        };
        let related = t.starts_with(m) || m.starts_with(&t);
        if !related {
            out.insert(t);
        }
    }
    out
}

/// A circle of imports among `edges`, if there is one.
fn circle(edges: &BTreeMap<Module, BTreeSet<Module>>) -> Option<Vec<Module>> {
    fn visit(
        v: &Module,
        edges: &BTreeMap<Module, BTreeSet<Module>>,
        path: &mut Vec<Module>,
        done: &mut BTreeSet<Module>,
    ) -> Option<Vec<Module>> {
        if let Some(k) = path.iter().position(|p| p == v) {
            return Some(path[k..].to_vec());
        }
        if done.contains(v) {
            return None;
        }
        path.push(v.clone());
        for w in edges.get(v).into_iter().flatten() {
            if let Some(c) = visit(w, edges, path, done) {
                return Some(c);
            }
        }
        path.pop();
        done.insert(v.clone());
        None
    }
    let mut done = BTreeSet::new();
    edges
        .keys()
        .find_map(|v| visit(v, edges, &mut Vec::new(), &mut done))
}

fn check(src: &Path) -> Option<Vec<Module>> {
    let mods = modules(src);
    let edges = mods
        .iter()
        .map(|(m, p)| {
            (
                m.clone(),
                imports(m, &std::fs::read_to_string(p).unwrap(), &mods),
            )
        })
        .collect();
    circle(&edges)
}

#[test]
fn no_crate_has_modules_that_import_each_other() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut sources = vec![root.join("src")];
    for e in std::fs::read_dir(root.join("crates")).unwrap() {
        sources.push(e.unwrap().path().join("src"));
    }
    let mut checked = 0;
    for src in sources.iter().filter(|s| s.is_dir()) {
        if let Some(c) = check(src) {
            let names: Vec<String> = c.iter().map(|m| m.join("::")).collect();
            panic!("{}: {}", src.display(), names.join(" -> "));
        }
        checked += 1;
    }
    assert!(checked >= 10, "only {checked} crates");
}

/// The check finds a circle where there is one.
#[test]
fn a_circle_is_found() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("circle/src");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("lib.rs"), "pub mod a;\npub mod b;\n").unwrap();
    std::fs::write(dir.join("a.rs"), "use crate::b::f;\npub fn g() {}\n").unwrap();
    std::fs::write(dir.join("b.rs"), "pub fn f() { super::a::g() }\n").unwrap();
    let c = check(&dir).expect("a circle");
    assert_eq!(c.len(), 2, "{c:?}");
    std::fs::write(dir.join("b.rs"), "pub fn f() {}\n").unwrap();
    assert_eq!(check(&dir), None);
}
