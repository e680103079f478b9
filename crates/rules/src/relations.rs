//! The relations a program's analyses export to run-time rules. This is the
//! one place that says what each means (docs/rules.md §8 links here).
//! Instance relations are at the analysed sizes (parameter values, `while`
//! trips) of the run, like σ itself.
//!
//! ```text
//! // The program, whatever the sizes.
//! .decl site(S: site, Kind: symbol)           // S is a statement label ("stmt") or a condition name ("cond")
//! .decl access(X: access, S: site, K: number, Array: symbol, Mode: symbol)
//!     // X is one access of S to Array. Mode "read": the K-th read of S (from 0,
//!     // in the order of `arrayflow flow`: the target of `+=` first, then
//!     // subscripts, then the right-hand side); Mode "write": S's target (K = 0).
//!     // A compound target is both a read and a write access.
//! .decl loop(L: loop, Counter: symbol, Doall: number)  // Doall = 1 when marked `doall`
//! .decl encloses(L: loop, S: site)            // S lies in the body of L, at any depth
//! .decl loop_depth(L: loop, D: number)        // L's trip is at depth D of the iteration vectors
//!     // (op_iter) of the operations in its body: the loops around L (`for` and
//!     // `while`) number D. So "O and O2 in different iterations of L" is
//!     // op_iter(O, D, V), op_iter(O2, D, V2), V != V2 with loop_depth(L, D)
//!     // (and both inside L, in one iteration of the loops around it).
//!
//! // Instances (the facts of src/facts), ids in execution order.
//! .decl op(O: number, S: site)                // operation O is an instance of S
//! .decl op_iter(O: number, D: number, V: number)  // O's iteration vector has V at depth D (0: outermost)
//! .decl read(R: number, O: number, X: access) // read instance R: access X of operation O
//! .decl read_cell(R: number, C: number)       // R reads cell C
//! .decl write(O: number, X: access, C: number, Must: number)
//!     // O writes cell C by access X; Must = 1 for an affine (must) write,
//!     // 0 for a may-write (one tuple per cell of its range)
//! .decl cell(C: number, Array: symbol)        // cell C is an element of Array
//! .decl cell_index(C: number, D: number, V: number)  // C's subscript in dimension D is V
//!
//! // σ (src/dataflow), R and classes (src/expansion).
//! .decl source(R: number, O: number)          // write operation O is a possible source of read R
//! .decl initial(R: number)                    // R may read the initial value of its cell
//! .decl related(O1: number, O2: number)       // R's spanning edges over writes: O1 and O2 are
//!                                             // sources of one read (O2 its first source)
//! .decl class(O: number, Label: number)       // live write O is in the expansion class labelled Label
//! .decl dead(O: number)                       // write O is a source of no read
//!
//! // Loops and dependences.
//! .decl flow_carried(L: loop, From: site, To: site, Array: symbol)
//!     // by σ at the analysed sizes: a value From writes in one iteration of L
//!     // is read by To in a later one (same instance of the loops around L)
//! .decl dep_carried(L: loop, Kind: symbol, From: site, To: site, Array: symbol)
//!     // by the exact tests, for every parameter value: L carries a "flow",
//!     // "anti" or "output" dependence From → To on Array
//! ```
//!
//! Guards (`src/facts` `guard`, `closure`) are not exported.

use super::syntax::Type;
use super::{Row, Symbols};
use arrayflow_model::model::{Access, ArrayId, CounterId, Node, Program, Site, Span};
use arrayflow_transform::expansion::Expansion;
use std::collections::HashMap;

/// The exported relations, in this order (`schema()` gives their columns).
pub const NAMES: [&str; 18] = [
    "site",
    "access",
    "loop",
    "encloses",
    "op",
    "op_iter",
    "read",
    "read_cell",
    "write",
    "cell",
    "cell_index",
    "source",
    "initial",
    "related",
    "class",
    "dead",
    "flow_carried",
    "loop_depth",
];

/// `dep_carried` comes last: it does not depend on the sizes.
pub const DEP_CARRIED: &str = "dep_carried";

/// Name and columns of every exported relation.
pub fn schema() -> Vec<(String, Vec<(String, Type)>)> {
    use Type::*;
    let cols: [&[(&str, Type)]; 19] = [
        &[("S", Site), ("Kind", Symbol)],
        &[
            ("X", Access),
            ("S", Site),
            ("K", Number),
            ("Array", Symbol),
            ("Mode", Symbol),
        ],
        &[("L", Loop), ("Counter", Symbol), ("Doall", Number)],
        &[("L", Loop), ("S", Site)],
        &[("O", Number), ("S", Site)],
        &[("O", Number), ("D", Number), ("V", Number)],
        &[("R", Number), ("O", Number), ("X", Access)],
        &[("R", Number), ("C", Number)],
        &[
            ("O", Number),
            ("X", Access),
            ("C", Number),
            ("Must", Number),
        ],
        &[("C", Number), ("Array", Symbol)],
        &[("C", Number), ("D", Number), ("V", Number)],
        &[("R", Number), ("O", Number)],
        &[("R", Number)],
        &[("O1", Number), ("O2", Number)],
        &[("O", Number), ("Label", Number)],
        &[("O", Number)],
        &[("L", Loop), ("From", Site), ("To", Site), ("Array", Symbol)],
        &[("L", Loop), ("D", Number)],
        &[
            ("L", Loop),
            ("Kind", Symbol),
            ("From", Site),
            ("To", Site),
            ("Array", Symbol),
        ],
    ];
    NAMES
        .iter()
        .chain([&DEP_CARRIED])
        .zip(cols)
        .map(|(n, c)| {
            (
                n.to_string(),
                c.iter().map(|&(a, t)| (a.to_string(), t)).collect(),
            )
        })
        .collect()
}

/// What is known of one loop (file ids), from the database.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoopInfo {
    pub counter: CounterId,
    /// The loop's header.
    pub span: Span,
    pub doall: bool,
    /// Flow dependences it carries by σ: (array, from, to).
    pub flows: Vec<(ArrayId, Site, Site)>,
    /// Dependences it carries by the exact tests: (kind, array, from, to).
    pub deps: Vec<(&'static str, ArrayId, Site, Site)>,
}

/// The exported relations of one program, and where their program
/// entities are in its source.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Exported {
    pub symbols: Symbols,
    /// Indexed like `schema()`.
    pub relations: Vec<Vec<Row>>,
    /// Span of every site, by the symbol id of its name.
    pub site_spans: HashMap<i64, Span>,
    /// Span of every access, by access id.
    pub access_spans: Vec<Span>,
    /// Span of every loop header, by loop id (the counter's index).
    pub loop_spans: HashMap<i64, Span>,
    /// Why the instance relations are missing: the analysis that makes them
    /// failed (rules reading them must not run).
    pub failed: Option<String>,
}

impl Exported {
    /// The span of a value of a site, access or loop column.
    pub fn span(&self, ty: Type, value: i64) -> Option<Span> {
        match ty {
            Type::Site => self.site_spans.get(&value).copied(),
            Type::Access => usize::try_from(value)
                .ok()
                .and_then(|k| self.access_spans.get(k))
                .copied(),
            Type::Loop => self.loop_spans.get(&value).copied(),
            _ => None,
        }
    }
}

/// A site with what the access relations need of it.
struct SiteAccesses<'a> {
    site: Site,
    name: String,
    span: Span,
    reads: Vec<&'a Access>,
    write: Option<&'a Access>,
}

fn sites(program: &Program) -> Vec<SiteAccesses<'_>> {
    let stmts = program.stmts().into_iter().map(|s| SiteAccesses {
        site: Site::Stmt(s.id),
        name: s.label.clone(),
        span: s.span,
        reads: s.reads(),
        write: s.write().map(|w| w.0),
    });
    let conds = program.conditions().into_iter().map(|c| SiteAccesses {
        site: Site::Cond(c.id),
        name: c.name.clone(),
        span: c.span,
        reads: c.reads(),
        write: None,
    });
    stmts.chain(conds).collect()
}

/// Loops around every site: (loop counter, site name) pairs; and every
/// loop's depth (the loops around it).
fn enclosing(
    nodes: &[Node],
    around: &mut Vec<CounterId>,
    out: &mut Vec<(CounterId, String)>,
    depths: &mut Vec<(CounterId, usize)>,
) {
    let here = |site: String, around: &[CounterId], out: &mut Vec<(CounterId, String)>| {
        out.extend(around.iter().map(|&c| (c, site.clone())));
    };
    for n in nodes {
        match n {
            Node::Stmt(s) => here(s.label.clone(), around, out),
            Node::For(f) => {
                depths.push((f.counter, around.len()));
                around.push(f.counter);
                enclosing(&f.body, around, out, depths);
                around.pop();
            }
            Node::While(w) => {
                depths.push((w.counter, around.len()));
                around.push(w.counter);
                here(w.cond.name.clone(), around, out);
                enclosing(&w.body, around, out, depths);
                around.pop();
            }
            Node::If(i) => {
                for (c, b) in &i.branches {
                    here(c.name.clone(), around, out);
                    enclosing(b, around, out, depths);
                }
                if let Some(b) = &i.otherwise {
                    enclosing(b, around, out, depths);
                }
            }
        }
    }
}

/// The exported relations of `program`, from its expansion at the analysed
/// sizes (which holds the facts and σ) and its loops; `None` for the
/// instance relations when the analysis failed (the static ones are still
/// there).
pub fn export(program: &Program, exp: Option<&Expansion>, loops: &[LoopInfo]) -> Exported {
    let mut sym = Symbols::default();
    let mut rels: Vec<Vec<Row>> = vec![Vec::new(); NAMES.len() + 1];
    let mut e = Exported::default();
    let (stmt, cond, read_s, write_s) = (
        sym.intern("stmt"),
        sym.intern("cond"),
        sym.intern("read"),
        sym.intern("write"),
    );
    let arrays: Vec<i64> = program.arrays.iter().map(|a| sym.intern(&a.name)).collect();
    // Static access ids: per site, its reads then its write.
    let mut read_id: HashMap<(usize, usize), i64> = HashMap::new();
    let mut write_id: HashMap<usize, i64> = HashMap::new();
    let mut site_sym: HashMap<Site, i64> = HashMap::new();
    for (k, sa) in sites(program).into_iter().enumerate() {
        let SiteAccesses {
            site,
            name,
            span,
            reads,
            write,
        } = sa;
        let s = sym.intern(&name);
        site_sym.insert(site, s);
        e.site_spans.insert(s, span);
        let kind = if matches!(site, Site::Stmt(_)) {
            stmt
        } else {
            cond
        };
        rels[0].push(vec![s, kind]);
        for (i, a) in reads.iter().enumerate() {
            let x = e.access_spans.len() as i64;
            e.access_spans.push(a.span);
            read_id.insert((k, i), x);
            rels[1].push(vec![x, s, i as i64, arrays[a.array.index()], read_s]);
        }
        if let Some(a) = write {
            let x = e.access_spans.len() as i64;
            e.access_spans.push(a.span);
            write_id.insert(k, x);
            rels[1].push(vec![x, s, 0, arrays[a.array.index()], write_s]);
        }
    }
    let site = |s: Site| site_sym[&s];
    for l in loops {
        let id = l.counter.index() as i64;
        let name = sym.intern(&program.counter_decl(l.counter).name);
        e.loop_spans.insert(id, l.span);
        rels[2].push(vec![id, name, l.doall as i64]);
        for &(a, from, to) in &l.flows {
            rels[16].push(vec![id, site(from), site(to), arrays[a.index()]]);
        }
        for &(kind, a, from, to) in &l.deps {
            let k = sym.intern(kind);
            rels[18].push(vec![id, k, site(from), site(to), arrays[a.index()]]);
        }
    }
    let mut around = Vec::new();
    let (mut pairs, mut depths) = (Vec::new(), Vec::new());
    enclosing(&program.body, &mut around, &mut pairs, &mut depths);
    for (c, s) in pairs {
        let s = sym.intern(&s);
        rels[3].push(vec![c.index() as i64, s]);
    }
    for (c, d) in depths {
        rels[17].push(vec![c.index() as i64, d as i64]);
    }
    if let Some(exp) = exp {
        instances(exp, &site_sym, &read_id, &write_id, &arrays, &mut rels);
    }
    e.symbols = sym;
    e.relations = rels;
    e
}

/// The instance relations, from the facts and σ of an expansion.
fn instances(
    exp: &Expansion,
    site_sym: &HashMap<Site, i64>,
    read_id: &HashMap<(usize, usize), i64>,
    write_id: &HashMap<usize, i64>,
    arrays: &[i64],
    rels: &mut [Vec<Row>],
) {
    let facts = &exp.inst.facts;
    let flow = &exp.inst.flow;
    let mut op_of: HashMap<(usize, &[i64]), i64> = HashMap::new();
    for o in 0..facts.n_ops() as u32 {
        let site = facts.site(o);
        let iter = facts.op_iter(o);
        op_of.insert((facts.site_index(site), iter), o as i64);
        rels[4].push(vec![o as i64, site_sym[&site]]);
        for (d, &v) in iter.iter().enumerate() {
            rels[5].push(vec![o as i64, d as i64, v]);
        }
    }
    for r in flow.iter() {
        let rid = r.index() as i64;
        let k = facts.site_index(r.site());
        let Some(&o) = op_of.get(&(k, r.iter())) else {
            continue;
        };
        rels[6].push(vec![rid, o, read_id[&(k, r.access())]]);
        if r.initial() {
            rels[12].push(vec![rid]);
        }
        let mut first = None;
        for (s, it) in r.writes() {
            if let Some(&w) = op_of.get(&(facts.site_index(s), it)) {
                rels[11].push(vec![rid, w]);
                let a = *first.get_or_insert(w);
                if a != w {
                    rels[13].push(vec![w, a]);
                }
            }
        }
    }
    for x in 0..facts.n_accs() as u32 {
        let o = facts.op(x);
        let cell = facts.acc_cell.get(x as usize).copied();
        let Some(c) = cell else { continue };
        if facts.is_read(x) {
            let slot = facts.acc_slot[x as usize];
            if slot != arrayflow_dataflow::facts::NONE {
                rels[7].push(vec![slot as i64, c as i64]);
            }
        }
        if facts.is_write(x) {
            let k = facts.site_index(facts.site(o));
            if let Some(&w) = write_id.get(&k) {
                rels[8].push(vec![o as i64, w, c as i64, facts.is_must(x) as i64]);
            }
        }
    }
    let mut cells: Vec<u32> = facts.acc_cell.clone();
    cells.sort_unstable();
    cells.dedup();
    for (c, cell) in cells
        .into_iter()
        .filter_map(|c| exp.cell(c).map(|x| (c, x)))
    {
        rels[9].push(vec![c as i64, arrays[cell.0.index()]]);
        for (d, &v) in cell.1.iter().enumerate() {
            rels[10].push(vec![c as i64, d as i64, v]);
        }
    }
    let cl = &exp.classes;
    for (w, &o) in cl.write_ops.iter().enumerate() {
        match cl.write_label(w) {
            Some(l) if cl.live[w] => rels[14].push(vec![o as i64, l as i64]),
            _ => {}
        }
        if !cl.live[w] {
            rels[15].push(vec![o as i64]);
        }
    }
}
