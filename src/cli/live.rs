//! `--live-out` and `--temporaries`: which arrays' final contents are
//! results. One notion with two spellings: the temporaries are every array
//! that is not live-out.

use crate::model::Program;

/// The arrays of `p` that are not live-out, by name, from either option
/// (none given: every array is live-out); an unknown name is an error.
pub fn scratch(
    p: &Program,
    live_out: &Option<Vec<String>>,
    temporaries: &Option<Vec<String>>,
) -> Result<Vec<String>, String> {
    let check = |flag: &str, names: &[String]| match names.iter().find(|n| p.array(n).is_none()) {
        Some(n) => Err(format!(
            "`--{flag} {n}`: the program declares no array `{n}`"
        )),
        None => Ok(()),
    };
    if let Some(names) = temporaries {
        check("temporaries", names)?;
        return Ok(names.clone());
    }
    let Some(live) = live_out else {
        return Ok(Vec::new());
    };
    check("live-out", live)?;
    Ok((p.arrays.iter())
        .map(|a| a.name.clone())
        .filter(|n| !live.contains(n))
        .collect())
}
