//! C values the model has no operator for, kept as uninterpreted functions
//! whose names say how to print them back: a floating literal `2.5e-3` is
//! the call `__lit_2_d5e_m3()`, a cast to a floating type `(float) x` is
//! `__cast_float(x)`, a comparison used as a value `a <= b` is `__le(a, b)`,
//! `c ? a : b` is `__select(c, a, b)`. The names are `.loop` identifiers,
//! so they survive the print and re-parse every transformation does; the
//! analyses and the interpreter see pure functions (the interpreter's
//! stronger check of a transformation), and the C printer (`emit`) prints
//! the C spelling.

/// Prefix of a floating literal's function.
const LIT: &str = "__lit_";
/// Prefix of a cast's function.
const CAST: &str = "__cast_";

/// The function standing for a floating literal; `None` when its spelling
/// has a character the encoding does not cover.
pub fn literal(spelling: &str) -> Option<String> {
    let mut out = String::from(LIT);
    for ch in spelling.chars() {
        match ch {
            '.' => out.push_str("_d"),
            '+' => out.push_str("_p"),
            '-' => out.push_str("_m"),
            c if c.is_ascii_alphanumeric() => out.push(c),
            _ => return None,
        }
    }
    Some(out)
}

/// The C spelling of a literal's function name.
pub fn literal_spelling(name: &str) -> Option<String> {
    let rest = name.strip_prefix(LIT)?;
    let mut out = String::new();
    let mut chars = rest.chars();
    while let Some(c) = chars.next() {
        if c != '_' {
            out.push(c);
            continue;
        }
        out.push(match chars.next()? {
            'd' => '.',
            'p' => '+',
            'm' => '-',
            _ => return None,
        });
    }
    (!out.is_empty()).then_some(out)
}

/// Whether a C type name (as a cast writes it) is a floating type.
pub fn is_floating(ty: &str) -> bool {
    matches!(
        ty.split_whitespace().collect::<Vec<_>>().as_slice(),
        ["float"] | ["double"] | ["long", "double"]
    )
}

/// Separates a cast's floating type from the typedef name it was written
/// with (`__cast_float__real_t` is `(real_t)`, `real_t` a `float`).
const AS: &str = "__";

/// The function standing for a cast to the floating type `ty`, written
/// `(spelled)` when that is a typedef's name for it.
pub fn cast(ty: &str, spelled: Option<&str>) -> String {
    let base = ty.split_whitespace().collect::<Vec<_>>().join("_");
    match spelled {
        Some(name) => format!("{CAST}{base}{AS}{name}"),
        None => format!("{CAST}{base}"),
    }
}

/// The type a cast's function name casts to, as the C printer writes it
/// (the typedef's name when the cast named one).
pub fn cast_type(name: &str) -> Option<String> {
    let rest = name.strip_prefix(CAST)?;
    let (base, spelled) = match rest.split_once(AS) {
        Some((base, spelled)) => (base, Some(spelled)),
        None => (rest, None),
    };
    let ty = base.replace('_', " ");
    is_floating(&ty).then(|| spelled.map_or(ty, str::to_string))
}

/// The uninterpreted function standing for a C operator the model lacks.
pub fn op_function(op: &str) -> &'static str {
    match op {
        "<" => "__lt",
        "<=" => "__le",
        ">" => "__gt",
        ">=" => "__ge",
        "==" => "__eq",
        "!=" => "__ne",
        "&&" => "__and",
        "||" => "__or",
        "&" => "__bitand",
        "|" => "__bitor",
        "^" => "__bitxor",
        "<<" => "__shl",
        ">>" => "__shr",
        "!" => "__not",
        "~" => "__bitnot",
        _ => "__op",
    }
}

/// The C operator an operator function stands for (`__le` is `<=`), and
/// whether its result is an integer whatever its operands.
pub fn operator(name: &str) -> Option<(&'static str, bool)> {
    Some(match name {
        "__lt" => ("<", true),
        "__le" => ("<=", true),
        "__gt" => (">", true),
        "__ge" => (">=", true),
        "__eq" => ("==", true),
        "__ne" => ("!=", true),
        "__and" => ("&&", true),
        "__or" => ("||", true),
        "__bitand" => ("&", true),
        "__bitor" => ("|", true),
        "__bitxor" => ("^", true),
        "__shl" => ("<<", true),
        "__shr" => (">>", true),
        "__not" => ("!", true),
        "__bitnot" => ("~", true),
        _ => return None,
    })
}

/// The functions of C's `<math.h>` (C99): calls to them are printed as
/// they are, with the header included instead of a prototype.
pub const MATH: &[&str] = &[
    "acos",
    "asin",
    "atan",
    "atan2",
    "cos",
    "sin",
    "tan",
    "cosh",
    "sinh",
    "tanh",
    "acosh",
    "asinh",
    "atanh",
    "exp",
    "exp2",
    "expm1",
    "frexp",
    "ldexp",
    "log",
    "log10",
    "log1p",
    "log2",
    "logb",
    "modf",
    "scalbn",
    "cbrt",
    "fabs",
    "hypot",
    "pow",
    "sqrt",
    "erf",
    "erfc",
    "lgamma",
    "tgamma",
    "ceil",
    "floor",
    "nearbyint",
    "rint",
    "round",
    "trunc",
    "fmod",
    "remainder",
    "copysign",
    "nextafter",
    "fdim",
    "fmax",
    "fmin",
    "fma",
];

/// Whether `name` is a `<math.h>` function: `sqrt`, or its `float` and
/// `long double` forms `sqrtf`, `sqrtl`.
pub fn is_math(name: &str) -> bool {
    MATH.contains(&name)
        || ["f", "l"].iter().any(|s| {
            name.strip_suffix(s)
                .is_some_and(|base| MATH.contains(&base) && base != "modf" && base != "frexp")
        })
        || matches!(name, "modff" | "modfl" | "frexpf" | "frexpl")
}

/// Functions of the C library, outside `<math.h>`, that compute a value
/// from their arguments alone and touch nothing else (docs/c.md, Calls).
pub const PURE: &[&str] = &["abs", "labs", "llabs", "imaxabs"];

/// Whether a call to `name`, a function the file does not define, is
/// read as a pure function of its arguments: `<math.h>`'s and [`PURE`].
/// Every other such call is a barrier ([`EFFECTS`]).
pub fn is_pure(name: &str) -> bool {
    is_math(name) || PURE.contains(&name)
}

/// Functions that end the run or leave it for good: a barrier that no
/// parallel loop may contain (OpenMP forbids leaving one).
pub fn ends_run(name: &str) -> bool {
    matches!(
        name,
        "exit" | "_Exit" | "quick_exit" | "abort" | "longjmp" | "siglongjmp" | "_longjmp"
    )
}

/// The model's scalar standing for everything a C program can change that
/// the model does not name (files, the heap, `errno`, the C library's own
/// state). Every call that is not pure reads and writes it
/// (`__effects = __effect_f(__effects, ...)`), which orders such calls among
/// themselves and makes every loop around one carry a dependence. The C
/// printer never prints it, nor the statements that write it.
pub const EFFECTS: &str = "__effects";
/// Prefix of the function standing for a call's effects in the statements
/// the front end adds for it (`__effect_exit`).
pub const EFFECT: &str = "__effect_";

/// The function standing for the effects of a call to `name`.
pub fn effect(name: &str) -> String {
    format!("{EFFECT}{name}")
}

/// Whether `name` is a function [`effect`] made.
pub fn is_effect(name: &str) -> bool {
    name.starts_with(EFFECT)
}

/// Whether the array `name` is [`EFFECTS`] or a copy of it a
/// transformation made (`__effects_1`, `__effects_p`).
pub fn is_effects_array(name: &str) -> bool {
    name == EFFECTS
        || name
            .strip_prefix(EFFECTS)
            .is_some_and(|s| s.starts_with('_'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literals_round_trip() {
        for s in ["2.0", "1.0e-5", "0.1f", "0x1.8p+3", "1E+10L", ".5"] {
            let f = literal(s).unwrap();
            assert!(f.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'));
            assert_eq!(literal_spelling(&f).as_deref(), Some(s));
        }
        assert_eq!(literal("1'000.0"), None);
    }

    #[test]
    fn casts_and_math() {
        assert_eq!(cast("long  double", None), "__cast_long_double");
        assert_eq!(cast("float", Some("real_t")), "__cast_float__real_t");
        assert_eq!(cast_type("__cast_float__real_t").as_deref(), Some("real_t"));
        assert_eq!(cast_type("__cast_int__real_t"), None);
        assert_eq!(
            cast_type("__cast_long_double").as_deref(),
            Some("long double")
        );
        assert_eq!(cast_type("__cast_int"), None);
        assert!(is_math("sqrt") && is_math("expf") && is_math("powl"));
        assert!(!is_math("sqrtx") && !is_math("f"));
    }

    #[test]
    fn pure_calls_and_effects() {
        assert!(is_pure("sqrtf") && is_pure("labs"));
        assert!(!is_pure("exit") && !is_pure("printf") && !is_pure("rand"));
        assert!(ends_run("exit") && ends_run("abort") && !ends_run("printf"));
        assert!(is_effect(&effect("exit")) && !is_effect("exit"));
        assert!(is_effects_array("__effects") && is_effects_array("__effects_1"));
        assert!(!is_effects_array("__effectsx") && !is_effect(EFFECTS));
    }
}
