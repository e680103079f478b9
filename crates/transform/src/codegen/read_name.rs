//! How the reports name a read: by array, site and access number, or as
//! the final value copy-out reads.

use crate::model::*;

/// How a reason names read `k` of `site`: "the final value of `B`" for the
/// read of every cell that copy-out adds (`augment_arrays`), else
/// "the read of `A` in `S` (access k)", numbered as `flow` numbers
/// accesses (from 0, among the site's reads).
pub fn read_of(p: &Program, site: Site, k: usize) -> String {
    if let Site::Stmt(s) = site {
        if let Some(a) = final_read(p, s) {
            return format!("the final value of `{}`", p.array_decl(a).name);
        }
    }
    let (reads, whose) = match site {
        Site::Stmt(s) => (p.stmts()[s.index()].reads(), String::new()),
        Site::Cond(c) => (p.conditions()[c.index()].reads(), "condition ".into()),
    };
    let what = match reads.get(k) {
        Some(r) => format!(" of `{}`", p.array_decl(r.array).name),
        None => String::new(),
    };
    format!(
        "the read{what} in {whose}`{}` (access {k})",
        p.site_name(site)
    )
}

/// The array `s` reads every final value of, when it is a copy-out read:
/// `out_B: use(B[o1, ..])` with no write after it.
fn final_read(p: &Program, s: StmtId) -> Option<ArrayId> {
    let stmts = p.stmts();
    let st = stmts.get(s.index())?;
    let StmtKind::Call { func, .. } = &st.kind else {
        return None;
    };
    let reads = st.reads();
    let [r] = reads[..] else {
        return None;
    };
    let later_write = stmts[s.index() + 1..].iter().any(|t| t.write().is_some());
    (func == "use" && st.label.starts_with("out_") && !later_write).then_some(r.array)
}
