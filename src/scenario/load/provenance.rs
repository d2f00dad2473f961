//! Where the keys of a merged scenario came from: which keys a host group's
//! population wrote, and which of its values the group replaced whole
//! (docs/population.md). `population` records it as it merges; `diagnostics`
//! reads it to report a mistake in the file the key came from. It is plain data,
//! below both, so that neither names the other back.

/// A population copied into host group `group`: where it came from and which keys
/// it gave, so that an error at one of them is reported in the population file.
pub(super) struct Inlined {
    pub(super) group: usize,
    /// The population file as named in messages.
    pub(super) origin: String,
    pub(super) text: String,
    pub(super) doc: toml_edit::Document<String>,
    /// What the merge did, by key path relative to the group.
    pub(super) trail: Trail,
}

/// Key paths, relative to the group, that the merge copied from the population
/// (`wrote`) or left to the group's own value, the population's replaced whole
/// (`replaced`).
#[derive(Default)]
pub(super) struct Trail {
    pub(super) wrote: Vec<Vec<String>>,
    pub(super) replaced: Vec<Vec<String>>,
}

impl Inlined {
    /// The population's key path of scenario key path `segs`, if the population
    /// wrote it (or a table above it).
    pub(super) fn owns<'a>(&self, segs: &'a [String]) -> Option<&'a [String]> {
        let rest = self.in_group(segs)?;
        self.trail
            .wrote
            .iter()
            .any(|w| rest.starts_with(w))
            .then_some(rest)
    }

    /// Key path `segs` relative to this population's group, if it is in the group.
    fn in_group<'a>(&self, segs: &'a [String]) -> Option<&'a [String]> {
        match segs {
            [h, i, rest @ ..] if h == "host_group" && *i == self.group.to_string() => Some(rest),
            _ => None,
        }
    }

    /// The population's key that the group's value at `segs` (or above it) replaced
    /// whole, if any.
    pub(super) fn replaced(&self, segs: &[String]) -> Option<String> {
        let rest = self.in_group(segs)?;
        self.trail
            .replaced
            .iter()
            .find(|r| rest.starts_with(r))
            .map(|r| r.join("."))
    }
}
