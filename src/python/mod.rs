//! Python knowledge, in one place: how module names and files map under a workspace's import
//! roots ([`modules`]; the roots themselves are read, in Pyright's order, by
//! [`crate::workspace::pyconfig`] and cached by [`crate::workspace::Workspace::import_roots`]),
//! the tokenizer-level scan of import statements ([`imports`]), which workspace files import
//! given modules ([`importers`]), what a change to a module can alter for them ([`reach`], from
//! its syntactic [`surface`]; methods it adds, [`members`]; methods it changes, [`methods`]),
//! the words of the library code the server reads and the names its protocols declare
//! ([`library`]), the words of a module that may name something ([`uses`]), and what a valid
//! identifier is.

pub mod importers;
pub mod imports;
pub mod library;
pub mod members;
pub mod methods;
pub mod modules;
pub mod reach;
pub mod surface;
pub mod uses;

pub use importers::importers;

/// Python's keywords: names that are never identifiers.
const KEYWORDS: &[&str] = &[
    "False", "None", "True", "and", "as", "assert", "async", "await", "break", "class", "continue",
    "def", "del", "elif", "else", "except", "finally", "for", "from", "global", "if", "import",
    "in", "is", "lambda", "nonlocal", "not", "or", "pass", "raise", "return", "try", "while",
    "with", "yield",
];

/// Whether `name` is a Python identifier that is not a keyword.
pub fn is_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(crate::selector::is_ident_start)
        && chars.all(crate::selector::is_ident_char)
        && !KEYWORDS.contains(&name)
}
