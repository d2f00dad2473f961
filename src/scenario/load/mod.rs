//! Reading a scenario file: text → `--set` overrides → serde → [`validate`].
//!
//! Every failure becomes one [`ScenarioError`] whose message names the file, the
//! `line:column` (1-based), the dotted key path and what was expected, because a
//! scenario author should be able to fix the file from the message alone.
//!
//! `--set KEY=VALUE` overrides are applied with `toml_edit` to the document *before*
//! deserialising, so an override goes through exactly the same type checks and
//! validation as the file itself. Applying them re-renders the text, which can move
//! lines; error positions are therefore mapped back to the original file through the
//! key path, and an error at a key that a `--set` wrote is reported as coming from
//! that `--set`.

use super::schema::ScenarioFile;
use super::validate::{Problem, validate};
use std::fmt;
use std::ops::Range;
use std::path::Path;
use toml_edit::{ArrayOfTables, DocumentMut, InlineTable, Item, Key, Table, TableLike, Value};

/// A scenario read, overridden and checked, ready to build a world from.
#[derive(Clone, Debug)]
pub struct Loaded {
    pub file: ScenarioFile,
    /// The scenario text after `--set` overrides (equal to the file's text when there
    /// are none). Written to the output so that a run can be reproduced; `--seed` is
    /// not written into it (it is in `file.simulation.seed`).
    pub source_text: String,
    /// Where the text came from: the path as given, or the origin of [`load_str`].
    pub origin: String,
    /// FNV-1a 64 of `source_text`, as 16 hex digits: a stable content id (not a
    /// cryptographic hash; no extra dependency for it).
    pub hash: String,
    /// Things that are allowed but probably not meant (a bare `delay_bound = 3`),
    /// located like errors, one line each, for the command line to print.
    pub warnings: Vec<String>,
}

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
    fn headline(&self) -> String {
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

/// Reads, overrides, deserialises and validates the scenario at `path`.
///
/// `sets` are `--set KEY=VALUE` arguments, applied in order; `seed` (from `--seed`)
/// replaces `simulation.seed` after them.
pub fn load(path: &Path, sets: &[String], seed: Option<u64>) -> Result<Loaded, ScenarioError> {
    let shown = path.display().to_string();
    let bytes = std::fs::read(path).map_err(|cause| ScenarioError::Read {
        path: shown.clone(),
        cause,
    })?;
    let text = String::from_utf8(bytes).map_err(|e| {
        let good = e.utf8_error().valid_up_to();
        // The prefix up to the bad byte is valid UTF-8, so columns count characters.
        let prefix = String::from_utf8_lossy(&e.as_bytes()[..good]);
        let (line, column) = line_col(&prefix, good);
        ScenarioError::NotUtf8 {
            path: shown.clone(),
            line,
            column,
        }
    })?;
    load_str(&text, &shown, sets, seed)
}

/// Like [`load`] for text already in memory; `origin` names it in messages and its
/// file stem is the default `simulation.name`.
pub fn load_str(
    text: &str,
    origin: &str,
    sets: &[String],
    seed: Option<u64>,
) -> Result<Loaded, ScenarioError> {
    let mut ctx = Ctx {
        origin,
        original: text,
        sets: Vec::new(),
        orig_doc: None,
    };
    // Syntax first, with toml_edit: its document keeps the spans used to turn key
    // paths back into positions.
    let orig_doc = toml_edit::Document::parse(text.to_owned()).map_err(|e| {
        let span = e.span().unwrap_or(0..0);
        ctx.at_offset(span.start, None, first_line(e.message()))
    })?;
    ctx.orig_doc = Some(orig_doc);

    let source_text = if sets.is_empty() {
        text.to_owned()
    } else {
        let mut doc = ctx
            .orig_doc
            .clone()
            .map(toml_edit::Document::into_mut)
            .unwrap_or_default();
        for arg in sets {
            let path = apply_set(&mut doc, arg).map_err(|message| ScenarioError::BadSet {
                origin: origin.to_owned(),
                arg: arg.clone(),
                message,
            })?;
            ctx.sets.push((path, arg.clone()));
        }
        doc.to_string()
    };

    let mut file: ScenarioFile =
        toml::from_str(&source_text).map_err(|e| ctx.de_error(&source_text, &e))?;
    if file.simulation.name.is_empty() {
        file.simulation.name = Path::new(origin)
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
    }
    if let Some(s) = seed {
        file.simulation.seed = s;
    }
    // The audit trail is on by default only where it is small and read: scripted
    // scenarios (issue 10 §5).
    if file.output.transitions.is_none() {
        file.output.transitions = Some(file.is_scripted());
    }

    let mut problems = validate(&file);
    if problems.is_empty() {
        problems = load_traces(&mut file, origin);
    }
    if problems.is_empty() {
        // Before anything is allocated for it.
        problems.extend(super::capacity::check(
            &file,
            super::capacity::memory_limit(),
        ));
    }
    if let Some((first, rest)) = problems.split_first() {
        let mut d = ctx.problem(first);
        d.more = rest.iter().map(|p| ctx.problem(p).headline()).collect();
        return Err(ScenarioError::Invalid(Box::new(d)));
    }
    for p in file.project.values_mut() {
        p.fill_one_app();
    }

    let warnings = toml_edit::Document::parse(source_text.clone())
        .map(|doc| {
            crate::base::units::short_bare_durations(doc.as_item())
                .into_iter()
                .map(|(path, v)| {
                    let p = Problem {
                        path: path.join("."),
                        message: format!(
                            "the bare number {v} is read as {v} seconds; write \"{v}d\", \"{v}h\" or \"{v}m\" if you meant days, hours or minutes, or \"{v}s\" to keep seconds without this warning"
                        ),
                    };
                    ctx.problem(&p).headline()
                })
                .collect()
        })
        .unwrap_or_default();

    locate_expectations(&mut file, &ctx);
    let hash = format!(
        "{:016x}",
        crate::base::hash::fnv1a64(source_text.as_bytes())
    );
    Ok(Loaded {
        file,
        source_text,
        origin: origin.to_owned(),
        hash,
        warnings,
    })
}

/// Gives every `[[expect]]` entry its `file:line:column` (the entry's header in the
/// original file; an entry added by `--set` names only the file).
fn locate_expectations(file: &mut ScenarioFile, ctx: &Ctx<'_>) {
    for (i, ex) in file.expect.iter_mut().enumerate() {
        let segs = ["expect".to_owned(), i.to_string()];
        let at = ctx
            .orig_doc
            .as_ref()
            .and_then(|d| match walk(d.as_item(), &segs) {
                (Some(s), true) => s.best(),
                _ => None,
            })
            .map(|r| line_col(ctx.original, r.start));
        ex.source.0 = Some(match at {
            Some((l, c)) => format!("{}:{l}:{c}", ctx.origin),
            None => ctx.origin.to_owned(),
        });
    }
}

/// A TOML file other than a scenario (a sweep file), read with the same
/// diagnostics: syntax and type errors give the file, line, column, key path and a
/// snippet. Returns the value and the document with spans, for [`problem_at`].
pub fn parse_toml<T: serde::de::DeserializeOwned>(
    text: &str,
    origin: &str,
) -> Result<(T, toml_edit::Document<String>), ScenarioError> {
    let mut ctx = Ctx {
        origin,
        original: text,
        sets: Vec::new(),
        orig_doc: None,
    };
    let doc = toml_edit::Document::parse(text.to_owned()).map_err(|e| {
        let span = e.span().unwrap_or(0..0);
        ctx.at_offset(span.start, None, first_line(e.message()))
    })?;
    ctx.orig_doc = Some(doc.clone());
    let value: T = toml::from_str(text).map_err(|e| ctx.de_error(text, &e))?;
    Ok((value, doc))
}

/// A semantic problem at the dotted key path `path` of a file read by
/// [`parse_toml`], located in its text like a scenario's validation problems.
pub fn problem_at(
    text: &str,
    origin: &str,
    doc: &toml_edit::Document<String>,
    path: &str,
    message: String,
) -> ScenarioError {
    let ctx = Ctx {
        origin,
        original: text,
        sets: Vec::new(),
        orig_doc: Some(doc.clone()),
    };
    ScenarioError::Invalid(Box::new(ctx.problem(&Problem {
        path: path.to_owned(),
        message,
    })))
}

/// Reads every host group's availability trace, relative to the scenario file's
/// folder, and keeps it in the group (`trace_data`). A file that cannot be read or
/// parsed is a problem of the `trace` key; the message names the trace file's line.
fn load_traces(file: &mut ScenarioFile, origin: &str) -> Vec<super::validate::Problem> {
    let base = Path::new(origin).parent().unwrap_or(Path::new("."));
    let mut problems = Vec::new();
    for (i, g) in file.host_group.iter_mut().enumerate() {
        let Some(rel) = &g.trace else { continue };
        let path = base.join(rel);
        match crate::client::availability::Trace::load(&path) {
            Ok(t) => g.trace_data = super::schema::TraceHandle(Some(std::sync::Arc::new(t))),
            Err(message) => problems.push(super::validate::Problem {
                path: format!("host_group.{i}.trace"),
                message,
            }),
        }
    }
    problems
}

// ----- error context -----------------------------------------------------------------

/// What the loader knows when it turns a failure into a [`Diagnostic`].
struct Ctx<'a> {
    origin: &'a str,
    /// The file's own text: positions are always reported in it.
    original: &'a str,
    /// Applied `--set`s: key path and the argument as typed.
    sets: Vec<(Vec<String>, String)>,
    /// The original text parsed with spans.
    orig_doc: Option<toml_edit::Document<String>>,
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
    fn at_offset(&self, offset: usize, key: Option<String>, message: String) -> ScenarioError {
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
    fn de_error(&self, text: &str, e: &toml::de::Error) -> ScenarioError {
        let message = in_words(&first_line(e.message()));
        let Some(span) = e.span() else {
            return ScenarioError::Invalid(Box::new(self.located(None, None, message)));
        };
        if self.sets.is_empty() {
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
        if let Some(arg) = self.blame(&path) {
            return ScenarioError::Invalid(Box::new(self.set_diagnostic(arg, key, message)));
        }
        let offset = self
            .orig_doc
            .as_ref()
            .and_then(|o| position_in_original(doc.as_item(), o.as_item(), &path, span.start));
        ScenarioError::Invalid(Box::new(self.located(offset, Some(key), message)))
    }

    /// A [`Problem`] from [`validate`], located by its key path.
    fn problem(&self, p: &Problem) -> Diagnostic {
        let segs: Vec<String> = p.path.split('.').map(str::to_owned).collect();
        if let Some(arg) = self.blame(&segs) {
            return self.set_diagnostic(arg, p.path.clone(), p.message.clone());
        }
        let offset = self
            .orig_doc
            .as_ref()
            .map(|d| locate(d.as_item(), &segs).map_or(0, |r| r.start));
        self.located(offset, Some(p.path.clone()), p.message.clone())
    }
}

/// toml's messages may end with a newline; keep the message on one line.
/// serde's Rust type names in a user's words: `invalid value: integer `-1`,
/// expected u32` becomes "`-1` is out of range; expected a whole number from 0 to
/// 4,294,967,295".
fn in_words(m: &str) -> String {
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

fn first_line(m: &str) -> String {
    m.trim().replace('\n', "; ")
}

/// 1-based line and column (in characters) of byte `offset` of `text`.
fn line_col(text: &str, offset: usize) -> (usize, usize) {
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
fn snippet(text: &str, line: usize, column: usize) -> String {
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

// ----- spans: offset → key path, key path → offset -----------------------------------

fn contains(r: &Range<usize>, off: usize) -> bool {
    r.start <= off && off < r.end.max(r.start + 1)
}

/// The key path of the innermost key or value whose span holds byte `off`.
///
/// Table spans are their headers, so an error reported on a header (a missing key of
/// `[[host_group]]`) maps to that table's path.
fn path_at(root: &Item, off: usize) -> Option<Vec<String>> {
    let mut path = Vec::new();
    search_item(root, off, &mut path).then_some(path)
}

fn search_item(item: &Item, off: usize, path: &mut Vec<String>) -> bool {
    match item {
        Item::Table(t) => search_table(t, off, path),
        Item::ArrayOfTables(a) => search_aot(a, off, path),
        Item::Value(v) => search_value(v, off, path),
        Item::None => false,
    }
}

fn search_aot(a: &ArrayOfTables, off: usize, path: &mut Vec<String>) -> bool {
    for (i, t) in a.iter().enumerate() {
        path.push(i.to_string());
        if search_table(t, off, path) || t.span().is_some_and(|s| contains(&s, off)) {
            return true;
        }
        path.pop();
    }
    false
}

fn search_table(t: &dyn TableLike, off: usize, path: &mut Vec<String>) -> bool {
    for (k, child) in t.iter() {
        path.push(k.to_owned());
        if t.key(k)
            .and_then(Key::span)
            .is_some_and(|s| contains(&s, off))
            || search_item(child, off, path)
            || child.span().is_some_and(|s| contains(&s, off))
        {
            return true;
        }
        path.pop();
    }
    false
}

fn search_value(v: &Value, off: usize, path: &mut Vec<String>) -> bool {
    match v {
        Value::Array(a) => {
            for (i, e) in a.iter().enumerate() {
                path.push(i.to_string());
                if search_value(e, off, path) || e.span().is_some_and(|s| contains(&s, off)) {
                    return true;
                }
                path.pop();
            }
            false
        }
        Value::InlineTable(t) => search_table(t, off, path),
        _ => false,
    }
}

/// A place in a parsed document: `ArrayOfTables` hands out tables and arrays hand out
/// values, so a walk cannot stay on `Item`s.
#[derive(Clone, Copy)]
enum Node<'a> {
    Table(&'a Table),
    Inline(&'a InlineTable),
    Aot(&'a ArrayOfTables),
    Value(&'a Value),
    None,
}

impl<'a> Node<'a> {
    fn of(item: &'a Item) -> Self {
        match item {
            Item::Table(t) => Node::Table(t),
            Item::ArrayOfTables(a) => Node::Aot(a),
            Item::Value(Value::InlineTable(t)) => Node::Inline(t),
            Item::Value(v) => Node::Value(v),
            Item::None => Node::None,
        }
    }
}

/// One step down: the child and its spans.
struct Step<'a> {
    node: Node<'a>,
    /// Span of the key naming the child (none for array entries).
    key: Option<Range<usize>>,
    /// Span of the child itself (a table's header, a value's text).
    value: Option<Range<usize>>,
}

impl Step<'_> {
    /// The span that best shows the child: a table's header, else its key, else its
    /// value.
    fn best(&self) -> Option<Range<usize>> {
        match self.node {
            Node::Table(_) => self.value.clone().or_else(|| self.key.clone()),
            _ => self.key.clone().or_else(|| self.value.clone()),
        }
    }
}

fn step<'a>(node: Node<'a>, seg: &str) -> Option<Step<'a>> {
    let keyed = |t: &'a dyn TableLike| {
        let (k, c) = t.get_key_value(seg)?;
        Some(Step {
            node: Node::of(c),
            key: k.span(),
            value: c.span(),
        })
    };
    match node {
        Node::Table(t) => keyed(t),
        Node::Inline(t) => keyed(t),
        Node::Aot(a) => {
            let t = a.get(seg.parse().ok()?)?;
            Some(Step {
                node: Node::Table(t),
                key: None,
                value: t.span(),
            })
        }
        Node::Value(Value::Array(arr)) => {
            let v = arr.get(seg.parse().ok()?)?;
            let node = match v {
                Value::InlineTable(t) => Node::Inline(t),
                v => Node::Value(v),
            };
            Some(Step {
                node,
                key: None,
                value: v.span(),
            })
        }
        Node::Value(_) | Node::None => None,
    }
}

/// Walks `segs` as far as the document has them. A segment that is not a key may be
/// the start of a key containing dots (`project."a.b"`), so longer joins are tried.
/// Returns the last step taken and whether the whole path was found.
fn walk<'a>(root: &'a Item, segs: &[String]) -> (Option<Step<'a>>, bool) {
    let mut node = Node::of(root);
    let mut last: Option<Step<'a>> = None;
    let mut i = 0;
    'outer: while i < segs.len() {
        for n in 1..=segs.len() - i {
            if let Some(s) = step(node, &segs[i..i + n].join(".")) {
                node = s.node;
                // Keep the deepest position known: an implicit table has no span.
                last = match (s.best(), last) {
                    (None, Some(prev)) => Some(Step {
                        key: prev.key,
                        value: prev.value,
                        node: s.node,
                    }),
                    _ => Some(s),
                };
                i += n;
                continue 'outer;
            }
        }
        return (last, false);
    }
    (last, true)
}

/// Where to point for the key path `segs`: the key (or table header) if it exists,
/// else the nearest enclosing table that does.
fn locate(root: &Item, segs: &[String]) -> Option<Range<usize>> {
    walk(root, segs).0.and_then(|s| s.best())
}

/// Maps byte `off` of the text after `--set` (where `path` is) to the original text.
///
/// When the same key exists in both, the offset keeps its distance from the start of
/// the key or value, so the column still points inside the value as serde reported.
fn position_in_original(
    modified: &Item,
    original: &Item,
    path: &[String],
    off: usize,
) -> Option<usize> {
    let (m, m_full) = walk(modified, path);
    let (o, o_full) = walk(original, path);
    if let (Some(m), Some(o), true, true) = (&m, &o, m_full, o_full) {
        for (ms, os) in [(&m.value, &o.value), (&m.key, &o.key)] {
            if let (Some(ms), Some(os)) = (ms, os)
                && contains(ms, off)
            {
                let delta = (off - ms.start).min(os.len().saturating_sub(1));
                return Some(os.start + delta);
            }
        }
    }
    o.and_then(|s| s.best()).map(|r| r.start).or(Some(0))
}

// ----- --set -------------------------------------------------------------------------

/// A mutable place in a document (see [`Node`]).
enum NodeMut<'a> {
    Item(&'a mut Item),
    Table(&'a mut Table),
    Value(&'a mut Value),
}

/// Applies one `--set KEY=VALUE` to `doc`; returns the key path it wrote.
///
/// VALUE is read as a TOML value (`86400`, `"10d"`, `true`, `1.5`, `[1, 2]`); text
/// that is not valid TOML (`seed`, `10d`) is taken as a string, so shell users need
/// not quote strings twice. Missing tables on the path are created.
fn apply_set(doc: &mut DocumentMut, arg: &str) -> Result<Vec<String>, String> {
    let Some((k, v)) = arg.split_once('=') else {
        return Err(
            "expected KEY=VALUE, e.g. `--set project.main.workunit.delay_bound=86400`".into(),
        );
    };
    let k = k.trim();
    if k.is_empty() {
        return Err("empty key; expected KEY=VALUE, e.g. `--set simulation.seed=7`".into());
    }
    let keys = Key::parse(k).map_err(|e| {
        format!(
            "`{k}` is not a key path ({}); expected dotted keys such as `project.main.workunit.min_quorum`",
            first_line(e.message())
        )
    })?;
    let segs: Vec<String> = keys.iter().map(|k| k.get().to_owned()).collect();
    let Some((last, parents)) = segs.split_last() else {
        return Err("empty key; expected KEY=VALUE".into());
    };
    let raw = v.trim();
    let value = raw
        .parse::<Value>()
        .unwrap_or_else(|_| Value::from(raw.to_owned()));

    check_map_keys(doc, &segs)?;
    let mut node = NodeMut::Item(doc.as_item_mut());
    for (i, seg) in parents.iter().enumerate() {
        node = step_mut(node, seg, &segs[..i], &segs[i + 1])?;
    }
    assign(node, last, &segs[..parents.len()], value)?;
    Ok(segs)
}

/// A `--set` never adds an entry to a map the file defines by name: a project
/// that does not exist is a misspelling, not a new project with default settings.
/// Lists the names that do exist.
fn check_map_keys(doc: &DocumentMut, segs: &[String]) -> Result<(), String> {
    if let [first, name, ..] = segs
        && first == "project"
    {
        let names: Vec<&str> = doc
            .get("project")
            .and_then(Item::as_table_like)
            .map(|t| t.iter().map(|(k, _)| k).collect())
            .unwrap_or_default();
        if !names.contains(&name.as_str()) {
            return Err(if names.is_empty() {
                format!(
                    "there is no project `{name}`: the scenario defines no [project.NAME] table"
                )
            } else {
                format!(
                    "there is no project `{name}`; the scenario's projects are: {}",
                    names.join(", ")
                )
            });
        }
    }
    Ok(())
}

/// The names (`name` keys) of the entries of an array of tables, for messages.
fn entry_names(a: &ArrayOfTables) -> Vec<String> {
    a.iter()
        .filter_map(|t| t.get("name").and_then(Item::as_str).map(String::from))
        .collect()
}

/// The index of the entry of `a` named `seg` (`host_group.desktops.count`).
fn named_entry(a: &ArrayOfTables, seg: &str) -> Option<usize> {
    a.iter()
        .position(|t| t.get("name").and_then(Item::as_str) == Some(seg))
}

/// [`index`] for an array of tables, whose entries may also be named by their
/// `name` key; a miss lists the names there are.
fn aot_index(seg: &str, a: &ArrayOfTables, at: &[String]) -> Result<usize, String> {
    if let Some(i) = named_entry(a, seg) {
        return Ok(i);
    }
    index(seg, a.len(), at).map_err(|m| {
        let names = entry_names(a);
        if names.is_empty() {
            m
        } else {
            format!("{m}; or name an entry: {}", names.join(", "))
        }
    })
}

fn shown(path: &[String]) -> String {
    if path.is_empty() {
        "the document".into()
    } else {
        format!("`{}`", path.join("."))
    }
}

fn index(seg: &str, len: usize, at: &[String]) -> Result<usize, String> {
    let i: usize = seg.parse().map_err(|_| {
        format!(
            "{} is an array; expected an index 0..{len}, got `{seg}`",
            shown(at)
        )
    })?;
    if i >= len {
        return Err(format!(
            "index {i} is out of range: {} has {len} entr{}",
            shown(at),
            if len == 1 { "y" } else { "ies" }
        ));
    }
    Ok(i)
}

/// Descends one segment, creating a missing table (`at` is the path so far, `next`
/// the segment after `seg`).
fn step_mut<'a>(
    node: NodeMut<'a>,
    seg: &str,
    at: &[String],
    next: &str,
) -> Result<NodeMut<'a>, String> {
    match node {
        NodeMut::Table(t) | NodeMut::Item(Item::Table(t)) => child_mut(t, false, seg, at, next),
        NodeMut::Item(Item::ArrayOfTables(a)) => {
            let i = aot_index(seg, a, at)?;
            a.get_mut(i)
                .map(NodeMut::Table)
                .ok_or_else(|| format!("index {i} is out of range for {}", shown(at)))
        }
        NodeMut::Item(Item::Value(v)) | NodeMut::Value(v) => match v {
            Value::InlineTable(t) => child_mut(t, true, seg, at, next),
            Value::Array(a) => {
                let i = index(seg, a.len(), at)?;
                a.get_mut(i)
                    .map(NodeMut::Value)
                    .ok_or_else(|| format!("index {i} is out of range for {}", shown(at)))
            }
            other => Err(format!(
                "{} is a {}, not a table; cannot set a key inside it",
                shown(at),
                other.type_name()
            )),
        },
        NodeMut::Item(Item::None) => Err(format!("{} does not exist", shown(at))),
    }
}

fn child_mut<'a>(
    t: &'a mut dyn TableLike,
    inline: bool,
    seg: &str,
    at: &[String],
    next: &str,
) -> Result<NodeMut<'a>, String> {
    if !t.contains_key(seg) {
        if !next.is_empty() && next.bytes().all(|b| b.is_ascii_digit()) {
            // Arrays are not created: which entries should the others be?
            let mut path = at.to_vec();
            path.push(seg.to_owned());
            return Err(format!(
                "index {next} is out of range: {} has no entries; expected an index into an array the file defines (add a `[[{seg}]]` entry first)",
                shown(&path)
            ));
        }
        // An inline table can only hold values; a standard table gets a standard
        // sub-table, implicit so that it prints no empty header.
        let new = if inline {
            Item::Value(Value::InlineTable(InlineTable::new()))
        } else {
            let mut nt = Table::new();
            nt.set_implicit(true);
            Item::Table(nt)
        };
        t.insert(seg, new);
    }
    t.get_mut(seg)
        .map(NodeMut::Item)
        .ok_or_else(|| format!("cannot create `{seg}`"))
}

/// Replaces a value in place, keeping its comments and spacing.
fn replace_value(old: &mut Value, new: Value) {
    let decor = old.decor().clone();
    *old = new;
    *old.decor_mut() = decor;
}

fn assign(node: NodeMut<'_>, last: &str, at: &[String], value: Value) -> Result<(), String> {
    let into_table = |t: &mut dyn TableLike, value: Value| {
        match t.get_mut(last) {
            Some(Item::Value(old)) => replace_value(old, value),
            _ => {
                t.insert(last, Item::Value(value));
            }
        }
        Ok(())
    };
    match node {
        NodeMut::Table(t) | NodeMut::Item(Item::Table(t)) => into_table(t, value),
        NodeMut::Item(Item::ArrayOfTables(a)) => {
            aot_index(last, a, at)?;
            Err(format!(
                "cannot replace a whole `[[{}]]` entry; expected a key inside it, e.g. `{}.{last}.KEY=VALUE`",
                at.join("."),
                at.join(".")
            ))
        }
        NodeMut::Item(Item::Value(v)) | NodeMut::Value(v) => match v {
            Value::InlineTable(t) => into_table(t, value),
            Value::Array(a) => {
                let i = index(last, a.len(), at)?;
                match a.get_mut(i) {
                    Some(old) => {
                        replace_value(old, value);
                        Ok(())
                    }
                    None => Err(format!("index {i} is out of range for {}", shown(at))),
                }
            }
            other => Err(format!(
                "{} is a {}, not a table; cannot set `{last}` inside it",
                shown(at),
                other.type_name()
            )),
        },
        NodeMut::Item(Item::None) => Err(format!("{} does not exist", shown(at))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(s: &str) -> DocumentMut {
        s.parse().expect("test document parses")
    }

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

    #[test]
    fn set_creates_tables_and_reads_bare_words_as_strings() {
        let mut d = doc("[simulation]\nseed = 1\n[project.main]\n");
        apply_set(&mut d, "project.main.backend.variant=seed").expect("applies");
        apply_set(&mut d, "simulation.seed = 7").expect("applies");
        let t = d.to_string();
        assert!(t.contains("seed = 7"), "{t}");
        assert!(t.contains("variant = \"seed\""), "{t}");
    }

    #[test]
    fn set_never_creates_a_project_and_names_the_ones_there_are() {
        let mut d = doc("[project.alpha]\n[project.beta]\n");
        let m = apply_set(&mut d, "project.alpah.workunit.min_quorum=2").unwrap_err();
        assert_eq!(
            m,
            "there is no project `alpah`; the scenario's projects are: alpha, beta"
        );
        let m = apply_set(&mut doc(""), "project.main.workunit.min_quorum=2").unwrap_err();
        assert!(m.contains("defines no [project.NAME] table"), "{m}");
    }

    #[test]
    fn set_names_host_groups_by_index_or_name_and_lists_the_names() {
        let mut d = doc(
            "[[host_group]]\nname = \"desk\"\ncount = 1\n[[host_group]]\nname = \"lap\"\ncount = 1\n",
        );
        apply_set(&mut d, "host_group.lap.count=7").expect("applies");
        assert!(d.to_string().contains("count = 7"));
        let m = apply_set(&mut d, "host_group.laptop.count=7").unwrap_err();
        assert!(m.ends_with("; or name an entry: desk, lap"), "{m}");
        let m = apply_set(&mut d, "host_group.2.count=7").unwrap_err();
        assert!(
            m.contains("has 2 entries") && m.contains("desk, lap"),
            "{m}"
        );
    }

    #[test]
    fn set_indexes_arrays_of_tables_and_inline_arrays() {
        let mut d = doc("[[host_group]]\ncount = 1\n[[event]]\nat = 0\nlost = [\"wu1_0\"]\n");
        apply_set(&mut d, "host_group.0.count=5").expect("applies");
        apply_set(&mut d, "event.0.lost.0=wu2_1").expect("applies");
        let t = d.to_string();
        assert!(t.contains("count = 5") && t.contains("\"wu2_1\""), "{t}");
        assert!(apply_set(&mut d, "host_group.1.count=5").is_err());
        assert!(apply_set(&mut d, "host_group.x.count=5").is_err());
        assert!(apply_set(&mut d, "host_group.0.count.x=5").is_err());
        assert!(apply_set(&mut d, "=5").is_err());
        assert!(apply_set(&mut d, "novalue").is_err());
    }

    #[test]
    fn path_at_finds_keys_values_and_headers() {
        let text = "[project.main.workunit]\nmin_quorum = 1\n[[host_group]]\ncount = 2\n[[host_group]]\nname = \"x\"\n";
        let d = toml_edit::Document::parse(text.to_owned()).expect("parses");
        let off = text.find("1\n").expect("present");
        assert_eq!(
            path_at(d.as_item(), off).map(|p| p.join(".")),
            Some("project.main.workunit.min_quorum".into())
        );
        let off = text.rfind("[[host_group]]").expect("present");
        assert_eq!(
            path_at(d.as_item(), off).map(|p| p.join(".")),
            Some("host_group.1".into())
        );
        let segs: Vec<String> = ["project", "main", "workunit", "delay_bound"]
            .map(String::from)
            .to_vec();
        assert_eq!(locate(d.as_item(), &segs).map(|r| r.start), Some(0));
    }
}
