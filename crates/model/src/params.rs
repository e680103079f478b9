//! Concrete parameter values of a program: `--param` overrides, defaults,
//! derived parameters computed as C computes them, and the program's
//! assumptions checked at the values. Beside the model rather than in it,
//! because its messages print the assumptions (`print`).

use crate::model::{eval, ExprKind, Program};
use crate::print;

impl Program {
    /// Concrete parameter values, indexed by `ParamId`: the overrides given,
    /// else the declared defaults (a derived parameter's computed from the
    /// values before it). Errors name an unknown parameter, a
    /// parameter with no value, or an assumption the values break.
    pub fn param_values(&self, overrides: &[(String, i64)]) -> Result<Vec<i64>, String> {
        let known = self.known_values(overrides)?;
        let mut values = Vec::with_capacity(known.len());
        for (p, v) in self.params.iter().zip(known) {
            match v {
                Some(v) => values.push(v),
                None if p.derived.is_some() => {
                    return Err(format!(
                        "parameter `{}` is `{}`, which C cannot compute at these values",
                        p.name,
                        p.derived.as_ref().map_or("", |d| d.text.as_str())
                    ))
                }
                None => {
                    return Err(format!(
                        "parameter `{}` has no default; give it a value with `--param {}=INT`",
                        p.name, p.name
                    ))
                }
            }
        }
        let all: Vec<Option<i64>> = values.iter().map(|&v| Some(v)).collect();
        self.check_assumptions(&all)?;
        Ok(values)
    }

    /// Whether `overrides` name parameters of the program and break none of
    /// its assumptions, for an answer that needs no value of its own (it
    /// holds for every value): an assumption that reads a parameter with
    /// neither a value nor a default is not checked.
    pub fn check_overrides(&self, overrides: &[(String, i64)]) -> Result<(), String> {
        let known = self.known_values(overrides)?;
        self.check_assumptions(&known)
    }

    /// Each parameter's value where one is known: given, its default, or
    /// (derived) computed from known ones. Errs on an unknown name.
    fn known_values(&self, overrides: &[(String, i64)]) -> Result<Vec<Option<i64>>, String> {
        for (name, _) in overrides {
            if self.param(name).is_none() {
                return Err(format!(
                    "`--param {name}=...`: the program declares no parameter `{name}`"
                ));
            }
        }
        let mut values: Vec<Option<i64>> = Vec::with_capacity(self.params.len());
        for p in &self.params {
            let given = overrides
                .iter()
                .rev()
                .find(|(n, _)| *n == p.name)
                .map(|&(_, v)| v);
            // A derived parameter not given follows the ones it reads.
            let computed = match (&p.derived, given) {
                (Some(d), None) => crate::model::cint::value(&d.expr, &|q| {
                    values.get(q.index()).copied().flatten()
                }),
                _ => None,
            };
            values.push(given.or(computed).or(p.default));
        }
        Ok(values)
    }

    /// Errs on the first assumption that `values` break; one that reads a
    /// parameter without a value is skipped.
    fn check_assumptions(&self, values: &[Option<i64>]) -> Result<(), String> {
        for a in &self.assumptions {
            let mut unknown = false;
            crate::model::nodes::cond(a, &mut |e| {
                if let ExprKind::Param(p) = e.kind {
                    unknown |= values[p.index()].is_none();
                }
            });
            if unknown {
                continue;
            }
            let known: Vec<i64> = values.iter().map(|v| v.unwrap_or(0)).collect();
            let mut env = eval::StaticEnv {
                params: &known,
                counters: &[],
            };
            match eval::cond(a, &mut env) {
                Ok(true) => {}
                Ok(false) => {
                    return Err(format!(
                        "the parameter values break the program's assumption `{}`",
                        print::cond(self, a)
                    ))
                }
                Err(_) => {
                    return Err(format!(
                    "the program's assumption `{}` cannot be evaluated at these parameter values",
                    print::cond(self, a)
                ))
                }
            }
        }
        Ok(())
    }
}
