//! Turning a failure to load into a message a scenario author can act on: the file,
//! `line:column` (1-based, in characters), the dotted key path, what was expected,
//! and the source line with a caret (docs/scenario.md, "Errors").
//!
//! [`ScenarioError`] is what loading returns and [`Diagnostic`] one located error;
//! `Ctx` is what the loader knows when a failure happens (the original text and
//! document, the `--set`s applied) and builds the diagnostic of a toml syntax error,
//! a serde type error or a validation [`Problem`], blaming a `--set` when the key
//! came from one. serde's Rust type names are put in words here (`in_words`). Where
//! a key is in the text is the business of `super::spans`.

use super::provenance::Inlined;
use super::spans::{locate, path_at, position_in_original, walk};
use crate::scenario::validate::Problem;
use std::fmt;

/// A scenario that cannot be used. The message is meant to be printed as is.
#[derive(Debug, thiserror::Error)]
pub enum ScenarioError {
    /// The file could not be read (missing, permission, a directory...).
    // The io error is part of the message rather than a `source`, so `{:#}` does not
    // print it twice.
    #[error("cannot read scenario file `{path}`: {cause}")]
    Read { path: String, cause: std::io::Error },
    /// The file is not UTF-8 text.
    #[error(
        "cannot read scenario file `{path}`: not UTF-8 text (invalid byte at line {line}, column {column}); expected a UTF-8 TOML file"
    )]
    NotUtf8 {
        path: String,
        line: usize,
        column: usize,
    },
    /// A `--set` argument that cannot be applied (no `=`, empty key, index out of
    /// range, path through a value that is not a table).
    #[error("{origin}: bad --set `{arg}`: {message}")]
    BadSet {
        origin: String,
        arg: String,
        message: String,
    },
    /// A syntax, type or semantic error located in the scenario.
    #[error("{0}")]
    Invalid(Box<Diagnostic>),
}

impl ScenarioError {
    /// The process exit code for a bad scenario (ripgrep's convention: 2 = error).
    pub fn exit_code(&self) -> i32 {
        2
    }

    /// `(line, column)`, 1-based, when the error has a place in the file.
    pub fn line_col(&self) -> Option<(usize, usize)> {
        match self {
            Self::NotUtf8 { line, column, .. } => Some((*line, *column)),
            Self::Invalid(d) => d.line_col,
            _ => None,
        }
    }

    /// The dotted key path the error is about, when known.
    pub fn key_path(&self) -> Option<&str> {
        match self {
            Self::Invalid(d) => d.key.as_deref(),
            _ => None,
        }
    }
}

/// A located error: where, which key, what is wrong.
#[derive(Debug, Clone)]
pub struct Diagnostic {
    /// File path (or origin of [`load_str`]).
    pub origin: String,
    /// 1-based `(line, column)` in the original file; `None` when the error comes
    /// from a `--set` or has no place.
    pub line_col: Option<(usize, usize)>,
    /// Dotted key path, arrays as `.N`.
    pub key: Option<String>,
    /// The `--set KEY=VALUE` argument the error comes from.
    pub set_arg: Option<String>,
    /// What is wrong and what was expected.
    pub message: String,
    /// The source line with a caret under the column.
    pub snippet: Option<String>,
    /// The `--set` arguments in force, when the error is not attributed to one.
    pub note: Option<String>,
    /// Further problems, already formatted, one per line.
    pub more: Vec<String>,
}

impl Diagnostic {
    /// The first line: `origin:line:col: `key`: message`.
    pub(super) fn headline(&self) -> String {
        let mut s = self.origin.clone();
        if let Some((l, c)) = self.line_col {
            s.push_str(&format!(":{l}:{c}"));
        }
        if let Some(a) = &self.set_arg {
            s.push_str(&format!(": from --set `{a}`"));
        }
        if let Some(k) = &self.key
            && !k.is_empty()
        {
            s.push_str(&format!(": `{k}`"));
        }
        s.push_str(": ");
        s.push_str(&self.message);
        s
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.headline())?;
        if let Some(s) = &self.snippet {
            write!(f, "\n{s}")?;
        }
        if let Some(n) = &self.note {
            write!(f, "\n{n}")?;
        }
        if !self.more.is_empty() {
            let n = self.more.len();
            write!(f, "\n{n} more problem{}:", if n == 1 { "" } else { "s" })?;
            for m in &self.more {
                write!(f, "\n  {m}")?;
            }
        }
        Ok(())
    }
}

// ----- error context -----------------------------------------------------------------

/// What the loader knows when it turns a failure into a [`Diagnostic`].
pub(super) struct Ctx<'a> {
    pub(super) origin: &'a str,
    /// The file's own text: positions are always reported in it.
    pub(super) original: &'a str,
    /// Applied `--set`s: key path and the argument as typed.
    pub(super) sets: Vec<(Vec<String>, String)>,
    /// The original text parsed with spans.
    pub(super) orig_doc: Option<toml_edit::Document<String>>,
    /// Populations copied into host groups: an error at a key one of them wrote is
    /// located in the population's file (`super::population`).
    pub(super) populations: Vec<Inlined>,
}

impl<'a> Ctx<'a> {
    /// The context of a file read on its own: no `--set`, no population; `doc` is
    /// its text parsed with spans, once it is.
    pub(super) fn of_file(
        origin: &'a str,
        original: &'a str,
        doc: Option<toml_edit::Document<String>>,
    ) -> Self {
        Ctx {
            origin,
            original,
            sets: Vec::new(),
            orig_doc: doc,
            populations: Vec::new(),
        }
    }
}

impl Ctx<'_> {
    fn base(&self, key: Option<String>, message: String) -> Diagnostic {
        Diagnostic {
            origin: self.origin.to_owned(),
            line_col: None,
            key,
            set_arg: None,
            message,
            snippet: None,
            note: None,
            more: Vec::new(),
        }
    }

    /// A diagnostic at byte `offset` of the original text.
    pub(super) fn at_offset(
        &self,
        offset: usize,
        key: Option<String>,
        message: String,
    ) -> ScenarioError {
        ScenarioError::Invalid(Box::new(self.located(Some(offset), key, message)))
    }

    fn located(&self, offset: Option<usize>, key: Option<String>, message: String) -> Diagnostic {
        let mut d = self.base(key, message);
        if let Some(off) = offset {
            let (l, c) = line_col(self.original, off);
            d.line_col = Some((l, c));
            d.snippet = Some(snippet(self.original, l, c));
        }
        if !self.sets.is_empty() {
            let args: Vec<String> = self
                .sets
                .iter()
                .map(|(_, a)| format!("--set {a}"))
                .collect();
            d.note = Some(format!("(with {} applied)", args.join(", ")));
        }
        d
    }

    /// The `--set` an error at `path` comes from, if any: one that wrote `path` or a
    /// parent of it, or one that created `path` on its way to a key inside it (the
    /// last such `--set` wins, as it was applied last).
    fn blame(&self, path: &[String]) -> Option<&str> {
        let wrote = self.sets.iter().rev().find(|(p, _)| path.starts_with(p));
        let created = || {
            let in_file = self
                .orig_doc
                .as_ref()
                .is_some_and(|d| walk(d.as_item(), path).1);
            if in_file {
                None
            } else {
                self.sets.iter().rev().find(|(p, _)| p.starts_with(path))
            }
        };
        wrote.or_else(created).map(|(_, a)| a.as_str())
    }

    fn set_diagnostic(&self, arg: &str, key: String, message: String) -> Diagnostic {
        let mut d = self.base(Some(key), message);
        d.set_arg = Some(arg.to_owned());
        d
    }

    /// A serde error on `text` (the text after `--set`).
    pub(super) fn de_error(&self, text: &str, e: &toml::de::Error) -> ScenarioError {
        let message = in_words(&first_line(e.message()));
        let Some(span) = e.span() else {
            return ScenarioError::Invalid(Box::new(self.located(None, None, message)));
        };
        if self.sets.is_empty() && self.populations.is_empty() {
            // `text` is the original: its spans are positions in the file.
            let key = self
                .orig_doc
                .as_ref()
                .and_then(|d| path_at(d.as_item(), span.start))
                .map(|p| p.join("."));
            return self.at_offset(span.start, key, message);
        }
        let Ok(doc) = toml_edit::Document::parse(text.to_owned()) else {
            return ScenarioError::Invalid(Box::new(self.located(None, None, message)));
        };
        let Some(path) = path_at(doc.as_item(), span.start) else {
            return ScenarioError::Invalid(Box::new(self.located(None, None, message)));
        };
        let key = path.join(".");
        if let Some(d) = self.in_population(&path, &message) {
            return ScenarioError::Invalid(Box::new(d));
        }
        let mut d = if let Some(arg) = self.blame(&path) {
            self.set_diagnostic(arg, key, message)
        } else {
            let offset = self
                .orig_doc
                .as_ref()
                .and_then(|o| position_in_original(doc.as_item(), o.as_item(), &path, span.start));
            self.located(offset, Some(key), message)
        };
        if d.note.is_none() {
            d.note = self.replaced_note(&path);
        }
        ScenarioError::Invalid(Box::new(d))
    }

    /// A [`Problem`] from [`validate`], located by its key path.
    pub(super) fn problem(&self, p: &Problem) -> Diagnostic {
        let segs: Vec<String> = p.path.split('.').map(str::to_owned).collect();
        if let Some(d) = self.in_population(&segs, &p.message) {
            return d;
        }
        let mut d = if let Some(arg) = self.blame(&segs) {
            self.set_diagnostic(arg, p.path.clone(), p.message.clone())
        } else {
            let offset = self
                .orig_doc
                .as_ref()
                .map(|d| locate(d.as_item(), &segs).map_or(0, |r| r.start));
            self.located(offset, Some(p.path.clone()), p.message.clone())
        };
        if d.note.is_none() {
            d.note = self.replaced_note(&segs);
        }
        d
    }
}

/// serde's Rust type names in a user's words: `invalid value: integer `-1`,
/// expected u32` becomes "`-1` is out of range; expected a whole number from 0 to
/// 4,294,967,295".
pub(super) fn in_words(m: &str) -> String {
    const RANGES: [(&str, &str); 9] = [
        ("u8", "0 to 255"),
        ("u16", "0 to 65,535"),
        ("u32", "0 to 4,294,967,295"),
        ("u64", "0 to 18,446,744,073,709,551,615"),
        ("usize", "0 to 18,446,744,073,709,551,615"),
        ("i8", "-128 to 127"),
        ("i16", "-32,768 to 32,767"),
        ("i32", "-2,147,483,648 to 2,147,483,647"),
        (
            "i64",
            "-9,223,372,036,854,775,808 to 9,223,372,036,854,775,807",
        ),
    ];
    let Some((head, ty)) = m.rsplit_once(", expected ") else {
        return m.to_owned();
    };
    let expected = match RANGES.iter().find(|(t, _)| *t == ty) {
        Some((_, range)) => format!("a whole number from {range}"),
        None if ty == "f64" || ty == "f32" => "a number".to_owned(),
        None => return m.to_owned(),
    };
    let head = if let Some(v) = head.strip_prefix("invalid value: integer ") {
        format!("{v} is out of range")
    } else if let Some(v) = head.strip_prefix("invalid type: floating point ") {
        format!("{v} is not a whole number")
    } else if let Some(v) = head.strip_prefix("invalid type: ") {
        format!("got {v}")
    } else {
        head.to_owned()
    };
    format!("{head}; expected {expected}")
}
/// toml's messages may end with a newline; keep the message on one line.
pub(super) fn first_line(m: &str) -> String {
    m.trim().replace('\n', "; ")
}

/// 1-based line and column (in characters) of byte `offset` of `text`.
pub(super) fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let mut off = offset.min(text.len());
    while !text.is_char_boundary(off) {
        off -= 1;
    }
    let before = &text[..off];
    let line = before.matches('\n').count() + 1;
    let start = before.rfind('\n').map_or(0, |i| i + 1);
    let column = before[start..].chars().count() + 1;
    (line, column)
}

/// The source line with a caret under the column, rustc-style.
pub(super) fn snippet(text: &str, line: usize, column: usize) -> String {
    let src = text.lines().nth(line - 1).unwrap_or("");
    let w = line.to_string().len();
    format!(
        "{:w$} |\n{line} | {src}\n{:w$} | {:>c$}",
        "",
        "",
        "^",
        w = w,
        c = column
    )
}

impl Ctx<'_> {
    /// The diagnostic of `message` at scenario key path `segs` when a population
    /// wrote that key: located in the population file.
    pub(super) fn in_population(&self, segs: &[String], message: &str) -> Option<Diagnostic> {
        self.populations.iter().find_map(|p| {
            let rest = p.owns(segs)?;
            let mut d = Ctx::of_file(&p.origin, &p.text, Some(p.doc.clone())).problem(&Problem {
                path: rest.join("."),
                message: message.to_owned(),
            });
            d.note = Some(format!(
                "(in the population of `host_group.{}`, file {})",
                p.group, p.origin
            ));
            Some(d)
        })
    }

    /// A note for a problem at scenario key path `segs` when the group's value there
    /// replaced a population's value whole: a distribution given in part (`--set
    /// host_group.0.error_prob.mu=-5`) is not completed from the population's.
    pub(super) fn replaced_note(&self, segs: &[String]) -> Option<String> {
        self.populations.iter().find_map(|p| {
            let key = p.replaced(segs)?;
            Some(format!(
                "(`host_group.{}.{key}` replaces the population's value whole, file {}: give the whole value)",
                p.group, p.origin
            ))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rust_type_names_are_put_in_words() {
        assert_eq!(
            in_words("invalid value: integer `-1`, expected u32"),
            "`-1` is out of range; expected a whole number from 0 to 4,294,967,295"
        );
        assert_eq!(
            in_words("invalid type: floating point `4000000000.0`, expected u16"),
            "`4000000000.0` is not a whole number; expected a whole number from 0 to 65,535"
        );
        assert_eq!(
            in_words("invalid type: string \"x\", expected f64"),
            "got string \"x\"; expected a number"
        );
        assert_eq!(in_words("missing field `count`"), "missing field `count`");
    }

    #[test]
    fn line_col_counts_characters() {
        assert_eq!(line_col("ab\ncd", 0), (1, 1));
        assert_eq!(line_col("ab\ncd", 4), (2, 2));
        assert_eq!(line_col("é = 1", 4), (1, 4));
    }
}
