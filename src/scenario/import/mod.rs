//! Importers of a project's own hosts (docs/population.md, "A project's own
//! hosts"): BOINC's statistics export of hosts ([`hosts`], the `host.xml` that
//! `sched/db_dump.cpp` writes) and one client's state ([`client_state`], the
//! `client_state.xml` and `global_prefs.xml` a BOINC client keeps, the inputs of the
//! client emulator `client/sim.cpp`).
//!
//! Both read XML with `roxmltree`, which keeps each node's byte range, so every
//! refusal names the file, the line and column, and the field. A gzipped file is
//! recognised by its magic bytes (`1f 8b`), whatever its name, and decompressed as
//! it is read with `flate2`.

pub mod client_state;
pub mod hosts;

use std::io::{BufRead, BufReader, Read};
use std::path::Path;

/// A file of an importer that cannot be used: the message names the file, the line
/// and column where they are known, the field, and what was expected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ImportError(pub String);

impl ImportError {
    /// A problem at `line:column` of `file`.
    pub(crate) fn at(file: &str, line: u32, column: u32, what: impl std::fmt::Display) -> Self {
        ImportError(format!("{file}:{line}:{column}: {what}"))
    }
}

/// The gzip magic bytes (RFC 1952 §2.3.1).
const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];

/// Opens `path` for reading line by line, decompressing it when it starts with the
/// gzip magic bytes (db_dump writes `host.xml.gz`, spec backend's statistics export;
/// a renamed file is still recognised).
pub(crate) fn open(path: &Path) -> Result<Box<dyn BufRead>, ImportError> {
    let shown = path.display().to_string();
    let file = std::fs::File::open(path)
        .map_err(|e| ImportError(format!("{shown}: cannot read the file: {e}")))?;
    let mut reader = BufReader::new(file);
    let head = reader
        .fill_buf()
        .map_err(|e| ImportError(format!("{shown}: cannot read the file: {e}")))?;
    if head.starts_with(&GZIP_MAGIC) {
        let gz = flate2::bufread::MultiGzDecoder::new(reader);
        Ok(Box::new(BufReader::new(gz)))
    } else {
        Ok(Box::new(reader))
    }
}

/// Reads all of `path` (decompressed) as UTF-8 text, for the small files of one
/// client.
pub(crate) fn read_text(path: &Path) -> Result<String, ImportError> {
    let shown = path.display().to_string();
    let mut r = open(path)?;
    let mut bytes = Vec::new();
    r.read_to_end(&mut bytes)
        .map_err(|e| read_failure(&shown, bytes.iter().filter(|&&b| b == b'\n').count(), &e))?;
    String::from_utf8(bytes).map_err(|e| {
        let good = &e.as_bytes()[..e.utf8_error().valid_up_to()];
        let line = good.iter().filter(|&&b| b == b'\n').count() as u32 + 1;
        ImportError(format!(
            "{shown}:{line}: not UTF-8 text; expected an XML file"
        ))
    })
}

/// The message of a read that failed after `lines` complete lines: a gzip stream
/// that ends early is a truncated file.
pub(crate) fn read_failure(file: &str, lines: usize, e: &std::io::Error) -> ImportError {
    if e.kind() == std::io::ErrorKind::UnexpectedEof {
        ImportError(format!(
            "{file}: the compressed file ends early, after line {lines}; expected a complete gzip file (truncated download?)"
        ))
    } else {
        ImportError(format!(
            "{file}: cannot read the file after line {lines}: {e}"
        ))
    }
}

/// Parses `text` as XML; a syntax error names its line and column.
pub(crate) fn parse_xml<'a>(
    file: &str,
    text: &'a str,
    line0: u32,
) -> Result<roxmltree::Document<'a>, ImportError> {
    roxmltree::Document::parse(text).map_err(|e| {
        let p = e.pos();
        ImportError::at(
            file,
            line0 + p.row - 1,
            p.col,
            format!("not well-formed XML: {e}"),
        )
    })
}

/// A located view of one XML element's children, for reading fields.
pub(crate) struct Fields<'a, 'input> {
    pub file: &'a str,
    pub doc: &'a roxmltree::Document<'input>,
    pub node: roxmltree::Node<'a, 'input>,
    /// The line of the document's first line in the file.
    pub line0: u32,
    /// What the element is, for messages (`host 17`, `project "alpha"`).
    pub what: String,
}

impl<'a, 'input> Fields<'a, 'input> {
    /// `line:column` of `node` in the file.
    pub(crate) fn pos(&self, node: roxmltree::Node) -> (u32, u32) {
        let p = self.doc.text_pos_at(node.range().start);
        (self.line0 + p.row - 1, p.col)
    }

    /// The element itself must be `<tag>`, the root of `file_kind` (`a BOINC client's
    /// client_state.xml`); otherwise an error at it.
    pub(crate) fn expect_tag(&self, tag: &str, file_kind: &str) -> Result<(), ImportError> {
        let name = self.node.tag_name().name();
        if name == tag {
            return Ok(());
        }
        let (l, c) = self.pos(self.node);
        Err(ImportError::at(
            self.file,
            l,
            c,
            format!("<{name}>; expected <{tag}>, {file_kind}"),
        ))
    }

    /// An error at `node` about field `name`.
    pub(crate) fn err(
        &self,
        node: roxmltree::Node,
        name: &str,
        what: impl std::fmt::Display,
    ) -> ImportError {
        let (l, c) = self.pos(node);
        ImportError::at(
            self.file,
            l,
            c,
            format!("field `{name}` of {}: {what}", self.what),
        )
    }

    /// The first child element named `name`.
    pub(crate) fn child(&self, name: &str) -> Option<roxmltree::Node<'a, 'input>> {
        self.node
            .children()
            .find(|n| n.is_element() && n.tag_name().name() == name)
    }

    /// The text of child `name` (trimmed), if present.
    pub(crate) fn text(&self, name: &str) -> Option<(roxmltree::Node<'a, 'input>, &'a str)> {
        self.child(name).map(|n| (n, n.text().unwrap_or("").trim()))
    }

    /// Child `name` as a number, `None` when absent.
    pub(crate) fn num(&self, name: &str) -> Result<Option<f64>, ImportError> {
        let Some((n, t)) = self.text(name) else {
            return Ok(None);
        };
        match t.parse::<f64>() {
            Ok(x) if x.is_finite() => Ok(Some(x)),
            _ => Err(self.err(
                n,
                name,
                format!("`{t}` is not a number; expected a finite number"),
            )),
        }
    }

    /// Child `name` as a number; a missing one is an error.
    pub(crate) fn req_num(&self, name: &str) -> Result<f64, ImportError> {
        self.num(name)?.ok_or_else(|| self.missing(name))
    }

    /// Child `name` as a non-negative number, `None` when absent.
    pub(crate) fn num_non_negative(&self, name: &str) -> Result<Option<f64>, ImportError> {
        let x = self.num(name)?;
        if let (Some(x), Some((n, _))) = (x, self.text(name))
            && x < 0.0
        {
            return Err(self.err(n, name, format!("{x} is negative; expected a number >= 0")));
        }
        Ok(x)
    }

    /// The error of a required field that is absent.
    pub(crate) fn missing(&self, name: &str) -> ImportError {
        let (l, c) = self.pos(self.node);
        ImportError::at(
            self.file,
            l,
            c,
            format!(
                "{} has no `{name}` field; expected <{name}>…</{name}>",
                self.what
            ),
        )
    }
}

/// Shared string tables: every distinct text is kept once and records hold its
/// index, so a million hosts cost one copy of each operating system name.
#[derive(Debug, Default)]
pub(crate) struct Interner {
    pub strings: Vec<std::sync::Arc<str>>,
    index: std::collections::HashMap<std::sync::Arc<str>, u32>,
}

impl Interner {
    pub(crate) fn get(&mut self, s: &str) -> u32 {
        if let Some(&k) = self.index.get(s) {
            return k;
        }
        let a: std::sync::Arc<str> = s.into();
        let k = self.strings.len() as u32;
        self.strings.push(a.clone());
        self.index.insert(a, k);
        k
    }
}
