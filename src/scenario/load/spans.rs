//! Positions in a parsed TOML document: from a byte offset to the key path there
//! (`path_at`, for serde's errors, which know only a span) and from a key path to
//! the span that best shows it (`walk`, `locate`, for validation problems, which
//! know only a path), and from the text after `--set` back to the original file
//! (`position_in_original`). Only `toml_edit` keeps spans, so this works on its
//! documents; the messages themselves are written in `super::diagnostics`.

use std::ops::Range;
use toml_edit::{ArrayOfTables, InlineTable, Item, Key, Table, TableLike, Value};

fn contains(r: &Range<usize>, off: usize) -> bool {
    r.start <= off && off < r.end.max(r.start + 1)
}

/// The key path of the innermost key or value whose span holds byte `off`.
///
/// Table spans are their headers, so an error reported on a header (a missing key of
/// `[[host_group]]`) maps to that table's path.
pub(super) fn path_at(root: &Item, off: usize) -> Option<Vec<String>> {
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
pub(super) struct Step<'a> {
    node: Node<'a>,
    /// Span of the key naming the child (none for array entries).
    key: Option<Range<usize>>,
    /// Span of the child itself (a table's header, a value's text).
    value: Option<Range<usize>>,
}

impl Step<'_> {
    /// The span that best shows the child: a table's header, else its key, else its
    /// value.
    pub(super) fn best(&self) -> Option<Range<usize>> {
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
pub(super) fn walk<'a>(root: &'a Item, segs: &[String]) -> (Option<Step<'a>>, bool) {
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
pub(super) fn locate(root: &Item, segs: &[String]) -> Option<Range<usize>> {
    walk(root, segs).0.and_then(|s| s.best())
}

/// Maps byte `off` of the text after `--set` (where `path` is) to the original text.
///
/// When the same key exists in both, the offset keeps its distance from the start of
/// the key or value, so the column still points inside the value as serde reported.
pub(super) fn position_in_original(
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

#[cfg(test)]
mod tests {
    use super::*;

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
