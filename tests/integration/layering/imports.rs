//! What a source file names of the crate: every path it writes, resolved to an
//! absolute `crate::…` path the way rustc resolves it for the cases this crate
//! uses: `crate::`, `super::` and `self::` paths, the names a `use` binds (plain,
//! grouped, renamed with `as`), and glob imports (`use super::*`, `use crate::x::*`),
//! through which a bare `child::item` names a module of the glob's target.
//!
//! It is a reader of tokens, not a compiler: comments, strings and character
//! literals are blanked out first, so a path in a doc comment or a message names
//! nothing. A bare name that no `use` of the file binds is taken for an outside
//! crate (`std::`, `serde::`) and ignored.
//!
//! The names a `use` binds are file-wide here, where rustc scopes them to their
//! block or inline module: a `use` inside one function is taken to bind for the
//! whole file. That can only make the reader see more imports than there are (a
//! bare `x::` elsewhere resolved through a `use` it is not in scope of), never
//! fewer, so a layering violation is never missed; the crate's code does not
//! rebind one name to two modules, which is the one case that would mislead it.

use std::collections::{BTreeMap, BTreeSet};

/// A module path from the crate root: `["crate", "stats", "recorder"]`.
pub type ModPath = Vec<String>;

/// `text` with comments, string literals and character literals replaced by
/// spaces (newlines kept), lifetimes untouched.
pub fn strip(text: &str) -> String {
    let b: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    let blank = |out: &mut String, c: char| out.push(if c == '\n' { '\n' } else { ' ' });
    while i < b.len() {
        let c = b[i];
        let next = b.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            while i < b.len() && b[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            let mut depth = 0;
            while i < b.len() {
                if b[i] == '/' && b.get(i + 1) == Some(&'*') {
                    depth += 1;
                    i += 2;
                } else if b[i] == '*' && b.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    blank(&mut out, b[i]);
                    i += 1;
                }
            }
        } else if c == 'r'
            && (next == Some('"') || next == Some('#'))
            && !b[..i].last().is_some_and(|&p| is_ident(p))
            && raw_string_start(&b[i + 1..]).is_some()
        {
            let hashes = raw_string_start(&b[i + 1..]).unwrap_or(0);
            i += 2 + hashes; // r, the hashes, the quote
            let close: Vec<char> = std::iter::once('"')
                .chain(std::iter::repeat_n('#', hashes))
                .collect();
            while i < b.len() && !b[i..].starts_with(&close) {
                blank(&mut out, b[i]);
                i += 1;
            }
            i += close.len();
            out.push(' ');
        } else if c == '"' {
            i += 1;
            while i < b.len() && b[i] != '"' {
                if b[i] == '\\' {
                    i += 1;
                }
                if i < b.len() {
                    blank(&mut out, b[i]);
                }
                i += 1;
            }
            i += 1;
            out.push(' ');
        } else if c == '\'' && next == Some('\\') {
            // An escaped character literal: '\n', '\'', '\u{1F600}'.
            i += 2;
            while i < b.len() && b[i] != '\'' {
                i += 1;
            }
            i += 1;
            out.push(' ');
        } else if c == '\'' && b.get(i + 2) == Some(&'\'') {
            i += 3; // 'x'
            out.push(' ');
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

/// The number of `#` of a raw string opening at `rest` (just after its `r`).
fn raw_string_start(rest: &[char]) -> Option<usize> {
    let hashes = rest.iter().take_while(|&&c| c == '#').count();
    (rest.get(hashes) == Some(&'"')).then_some(hashes)
}

pub fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Ident(String),
    Path, // ::
    Open,
    Close,
    Semi,
    Comma,
    Star,
    Other,
}

fn tokens(code: &str) -> Vec<Tok> {
    let c: Vec<char> = code.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < c.len() {
        let ch = c[i];
        if is_ident(ch) {
            let start = i;
            while i < c.len() && is_ident(c[i]) {
                i += 1;
            }
            out.push(Tok::Ident(c[start..i].iter().collect()));
            continue;
        }
        i += 1;
        out.push(match ch {
            ':' if c.get(i) == Some(&':') => {
                i += 1;
                Tok::Path
            }
            '{' => Tok::Open,
            '}' => Tok::Close,
            ';' => Tok::Semi,
            ',' => Tok::Comma,
            '*' => Tok::Star,
            c if c.is_whitespace() => continue,
            _ => Tok::Other,
        });
    }
    out
}

/// One binding a `use` makes: `name` stands for `path` (`*` for a glob of `path`).
#[derive(Debug)]
struct Binding {
    name: String,
    path: Vec<String>,
}

/// Parses one use tree at `toks[*i..]` under `prefix`, adding its bindings.
fn use_tree(toks: &[Tok], i: &mut usize, prefix: Vec<String>, out: &mut Vec<Binding>) {
    let mut path = prefix;
    loop {
        match toks.get(*i) {
            Some(Tok::Ident(s)) if s == "as" => {
                *i += 1;
                if let Some(Tok::Ident(alias)) = toks.get(*i) {
                    *i += 1;
                    if alias != "_" {
                        out.push(Binding {
                            name: alias.clone(),
                            path,
                        });
                    }
                }
                return;
            }
            Some(Tok::Ident(s)) => {
                path.push(s.clone());
                *i += 1;
            }
            Some(Tok::Path) => *i += 1,
            Some(Tok::Star) => {
                *i += 1;
                out.push(Binding {
                    name: "*".into(),
                    path,
                });
                return;
            }
            Some(Tok::Open) => {
                *i += 1;
                loop {
                    match toks.get(*i) {
                        Some(Tok::Close) => {
                            *i += 1;
                            return;
                        }
                        Some(Tok::Comma) => *i += 1,
                        None => return,
                        _ => use_tree(toks, i, path.clone(), out),
                    }
                }
            }
            _ => {
                // The end of this tree: `,`, `}` or `;`. `self` names the prefix.
                if path.last().is_some_and(|s| s == "self") {
                    path.pop();
                }
                if let Some(name) = path.last().cloned() {
                    out.push(Binding { name, path });
                }
                return;
            }
        }
    }
}

/// Resolves `path`, written in module `at`, against the file's bindings; `None` for
/// a path outside the crate.
fn resolve(
    path: &[String],
    at: &[String],
    bindings: &[Binding],
    children: &dyn Fn(&[String]) -> BTreeSet<String>,
) -> Option<ModPath> {
    let first = path.first()?;
    let mut base: ModPath = match first.as_str() {
        "crate" => vec!["crate".into()],
        "self" => at.to_vec(),
        "super" => {
            let mut m = at.to_vec();
            let mut rest = path;
            while rest.first().is_some_and(|s| s == "super") {
                m.pop();
                rest = &rest[1..];
            }
            m.extend(rest.iter().cloned());
            return Some(m);
        }
        _ => {
            if let Some(b) = bindings.iter().find(|b| &b.name == first) {
                let mut p = b.path.clone();
                p.extend(path[1..].iter().cloned());
                return absolute(&p, at);
            }
            // Through a glob: `child::…` when a glob's target has that child module.
            for g in bindings.iter().filter(|b| b.name == "*") {
                if let Some(target) = absolute(&g.path, at)
                    && children(&target).contains(first)
                {
                    let mut p = target;
                    p.extend(path.iter().cloned());
                    return Some(p);
                }
            }
            // A child module of the file's own module (`mod x;` then `x::…`).
            if children(at).contains(first) {
                let mut p = at.to_vec();
                p.extend(path.iter().cloned());
                return Some(p);
            }
            return None;
        }
    };
    base.extend(path[1..].iter().cloned());
    Some(base)
}

/// A `use` path made absolute (use paths start at `crate`, `super`, `self`, or
/// an outside crate).
fn absolute(path: &[String], at: &[String]) -> Option<ModPath> {
    match path.first().map(String::as_str) {
        Some("crate" | "self" | "super") => resolve(path, at, &[], &|_: &[String]| BTreeSet::new()),
        _ => None,
    }
}

/// A crate path a file names, and whether it names it from test code only.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Named {
    pub path: ModPath,
    /// Named inside a `#[cfg(test)]` module, one whose name starts with `test`,
    /// or a file of such a module: a unit test may drive the module from above,
    /// which the code itself must not.
    pub in_test: bool,
}

/// Every crate path the file of module `module` names, resolved. `children(m)`
/// gives the child modules of module `m`, from the source tree.
pub fn named_paths(
    text: &str,
    module: &[String],
    children: &dyn Fn(&[String]) -> BTreeSet<String>,
) -> BTreeSet<Named> {
    let toks = tokens(&strip(text));
    // Pass 1: the bindings of every `use`, and the inline module each sits in.
    let mut bindings = Vec::new();
    let mut at: ModPath = module.to_vec();
    let mut depth = 0usize;
    // The depth at which each inline `mod` opened, and whether it is test code.
    let mut opened: Vec<(usize, bool)> = Vec::new();
    let file_is_test = module.last().is_some_and(|m| m.starts_with("test"));
    let mut cfg_test = false; // a `#[cfg(test)]` waits for its item
    let mut in_test = vec![file_is_test];
    let mut paths: Vec<(Vec<String>, ModPath, bool)> = Vec::new();
    let mut i = 0;
    while i < toks.len() {
        let testing = *in_test.last().unwrap_or(&false);
        match &toks[i] {
            Tok::Ident(s) if s == "cfg" && toks.get(i + 2) == Some(&Tok::Ident("test".into())) => {
                cfg_test = true;
                i += 3;
            }
            Tok::Ident(s) if s == "mod" => {
                if let (Some(Tok::Ident(name)), Some(Tok::Open)) =
                    (toks.get(i + 1), toks.get(i + 2))
                {
                    at.push(name.clone());
                    depth += 1;
                    let test = testing || cfg_test || name.starts_with("test");
                    opened.push((depth, test));
                    in_test.push(test);
                    cfg_test = false;
                    i += 3;
                    continue;
                }
                i += 1;
            }
            Tok::Ident(s) if s == "use" && !matches!(toks.get(i + 1), Some(Tok::Path)) => {
                i += 1;
                let mut local = Vec::new();
                use_tree(&toks, &mut i, Vec::new(), &mut local);
                for b in local {
                    let path = absolute(&b.path, &at).unwrap_or(b.path);
                    paths.push((path.clone(), at.clone(), testing));
                    bindings.push(Binding { name: b.name, path });
                }
            }
            Tok::Ident(first) if matches!(toks.get(i + 1), Some(Tok::Path)) => {
                let mut path = vec![first.clone()];
                i += 1;
                while let (Some(Tok::Path), Some(Tok::Ident(s))) = (toks.get(i), toks.get(i + 1)) {
                    path.push(s.clone());
                    i += 2;
                }
                paths.push((path, at.clone(), testing));
            }
            Tok::Open | Tok::Semi => {
                cfg_test = false; // the attribute's item was not a module
                if toks[i] == Tok::Open {
                    depth += 1;
                }
                i += 1;
            }
            Tok::Close => {
                if opened.last().is_some_and(|&(d, _)| d == depth) {
                    opened.pop();
                    in_test.pop();
                    at.pop();
                }
                depth = depth.saturating_sub(1);
                i += 1;
            }
            _ => i += 1,
        }
    }
    paths
        .iter()
        .filter_map(|(p, at, in_test)| {
            let path = resolve(p, at, &bindings, children)?;
            Some(Named {
                path,
                in_test: *in_test,
            })
        })
        .filter(|n| n.path.first().is_some_and(|s| s == "crate"))
        .collect()
}

/// The child modules of every module, from the files under `src/`: `a/b.rs` and
/// `a/b/mod.rs` are both module `crate::a::b`. `main.rs` is the binary's root, no
/// module of the library.
pub fn module_tree(files: &[String]) -> BTreeMap<ModPath, BTreeSet<String>> {
    let mut tree: BTreeMap<ModPath, BTreeSet<String>> = BTreeMap::new();
    for f in files.iter().filter(|f| *f != "main.rs") {
        let m = module_of(f);
        if m.len() > 1 {
            tree.entry(m[..m.len() - 1].to_vec())
                .or_default()
                .insert(m[m.len() - 1].clone());
        }
    }
    tree
}

/// The module of the file at `rel` (relative to `src/`, with `/`).
pub fn module_of(rel: &str) -> ModPath {
    let mut m: ModPath = vec!["crate".into()];
    let stem = rel.trim_end_matches(".rs");
    m.extend(stem.split('/').map(String::from));
    if m.last().is_some_and(|s| s == "mod" || s == "lib") {
        m.pop();
    }
    m
}
