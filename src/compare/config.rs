//! The configuration keys that differ between runs.
//!
//! A run's effective configuration (`manifest.json` `effective_config`) is flattened
//! to one entry per leaf, keyed by its path in `--set` syntax
//! (`project.main.workunit.delay_bound`, `host_group.0.count`), and the keys whose
//! values are not the same in every run are listed.

use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};

/// One key that differs: its value in each run, `None` where the run lacks it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeyDiff {
    pub key: String,
    pub values: Vec<Option<String>>,
}

/// Flattens a JSON value to `key.path → value`. Strings are shown without quotes
/// (the empty string as `""`), other scalars as JSON (`0.002`, `true`, `null`); an empty array or object is a
/// leaf (`[]`, `{}`), so that `event = []` differs from a run with events.
pub fn flatten(v: &Value) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    walk(v, String::new(), &mut out);
    out
}

fn walk(v: &Value, path: String, out: &mut BTreeMap<String, String>) {
    let child = |k: &str| {
        if path.is_empty() {
            k.to_string()
        } else {
            format!("{path}.{k}")
        }
    };
    match v {
        Value::Object(m) if !m.is_empty() => {
            for (k, x) in m {
                walk(x, child(k), out);
            }
        }
        Value::Array(a) if !a.is_empty() => {
            for (i, x) in a.iter().enumerate() {
                walk(x, child(&i.to_string()), out);
            }
        }
        Value::String(s) if s.is_empty() => {
            out.insert(path, "\"\"".to_string());
        }
        Value::String(s) => {
            out.insert(path, s.clone());
        }
        other => {
            out.insert(path, other.to_string());
        }
    }
}

/// The keys whose values differ between `configs` (one per run), in key order with
/// array indexes in numeric order (`host_group.2` before `host_group.10`).
pub fn diff(configs: &[&BTreeMap<String, String>]) -> Vec<KeyDiff> {
    let keys: BTreeSet<&String> = configs.iter().flat_map(|c| c.keys()).collect();
    let mut out: Vec<KeyDiff> = keys
        .into_iter()
        .filter_map(|k| {
            let values: Vec<Option<String>> = configs.iter().map(|c| c.get(k).cloned()).collect();
            values.iter().any(|v| v != &values[0]).then(|| KeyDiff {
                key: k.clone(),
                values,
            })
        })
        .collect();
    out.sort_by(|a, b| natural_key(&a.key).cmp(&natural_key(&b.key)));
    out
}

/// For display: the keys of a table that some runs lack altogether (a project only
/// one run has) become one entry for the table, with `(N keys)` for the runs that
/// have it and `None` for those that do not. Other keys are kept as they are.
pub(crate) fn collapse(diffs: &[KeyDiff], configs: &[&BTreeMap<String, String>]) -> Vec<KeyDiff> {
    let mut out: Vec<KeyDiff> = Vec::new();
    let mut group: Option<(String, Vec<&KeyDiff>)> = None;
    let flush = |group: &mut Option<(String, Vec<&KeyDiff>)>, out: &mut Vec<KeyDiff>| {
        if let Some((root, keys)) = group.take() {
            if keys.len() == 1 {
                out.push(keys[0].clone());
            } else {
                let values = configs
                    .iter()
                    .map(|c| {
                        let n = c.keys().filter(|k| under(k, &root)).count();
                        (n > 0).then(|| format!("({n} keys)"))
                    })
                    .collect();
                out.push(KeyDiff { key: root, values });
            }
        }
    };
    for d in diffs {
        let root = absent_root(&d.key, &d.values, configs);
        match (&mut group, root) {
            (Some((r, keys)), Some(root)) if *r == root => keys.push(d),
            (_, root) => {
                flush(&mut group, &mut out);
                match root {
                    Some(root) => group = Some((root, vec![d])),
                    None => out.push(d.clone()),
                }
            }
        }
    }
    flush(&mut group, &mut out);
    out
}

/// Whether `key` is `root` or lies under it.
fn under(key: &str, root: &str) -> bool {
    key.strip_prefix(root)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with('.'))
}

/// The shortest prefix of `key` that a run lacking `key` has nothing under, if any
/// run lacks it.
fn absent_root(
    key: &str,
    values: &[Option<String>],
    configs: &[&BTreeMap<String, String>],
) -> Option<String> {
    let ends: Vec<usize> = key
        .match_indices('.')
        .map(|(i, _)| i)
        .chain([key.len()])
        .collect();
    values
        .iter()
        .zip(configs)
        .filter(|(v, _)| v.is_none())
        .filter_map(|(_, c)| {
            ends.iter()
                .map(|&e| &key[..e])
                .find(|p| !c.keys().any(|k| under(k, p)))
        })
        .min_by_key(|p| p.len())
        .map(str::to_string)
}

/// Sort key of a dotted path: numeric segments compare as numbers.
fn natural_key(key: &str) -> Vec<(u8, u64, &str)> {
    key.split('.')
        .map(|s| match s.parse::<u64>() {
            Ok(n) => (0, n, ""),
            Err(_) => (1, 0, s),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn flatten_gives_set_style_key_paths() {
        let v = json!({
            "simulation": {"name": "q", "seed": 42},
            "project": {"main": {"workunit": {"delay_bound": "3d", "min_quorum": 2}}},
            "host_group": [{"count": 50, "on_period": null}],
            "event": [],
            "output": {},
        });
        let f = flatten(&v);
        let pairs: Vec<(&str, &str)> = f.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        assert_eq!(
            pairs,
            [
                ("event", "[]"),
                ("host_group.0.count", "50"),
                ("host_group.0.on_period", "null"),
                ("output", "{}"),
                ("project.main.workunit.delay_bound", "3d"),
                ("project.main.workunit.min_quorum", "2"),
                ("simulation.name", "q"),
                ("simulation.seed", "42"),
            ]
        );
    }

    #[test]
    fn diff_lists_changed_added_and_removed_keys() {
        let a = flatten(&json!({"wu": {"delay_bound": 259200, "quorum": 2}, "hg": [{"n": 1}]}));
        let b = flatten(&json!({
            "wu": {"delay_bound": 604800, "quorum": 2},
            "hg": [{"n": 1}, {"n": 2}, {"n": 3}, {"n": 4}, {"n": 5}, {"n": 6}, {"n": 7}, {"n": 8}, {"n": 9}, {"n": 10}, {"n": 11}],
        }));
        let d = diff(&[&a, &b]);
        let keys: Vec<&str> = d.iter().map(|k| k.key.as_str()).collect();
        assert_eq!(keys[0], "hg.1.n");
        assert_eq!(keys[1], "hg.2.n");
        assert_eq!(keys[9], "hg.10.n");
        assert_eq!(
            d.last(),
            Some(&KeyDiff {
                key: "wu.delay_bound".into(),
                values: vec![Some("259200".into()), Some("604800".into())],
            })
        );
        assert_eq!(d[0].values, vec![None, Some("2".into())]);
        assert!(diff(&[&a, &a.clone()]).is_empty());
    }

    #[test]
    fn a_table_only_some_runs_have_is_shown_once() {
        let a = flatten(&json!({"project": {"main": {"db": "3d"}}, "hg": [{"p": ""}]}));
        let b = flatten(&json!({
            "project": {"main": {"db": "7d"}, "extra": {"db": "1d", "q": 2, "app": {"n": "x"}}},
            "hg": [{"p": "main"}],
        }));
        let configs = [&a, &b];
        let d = diff(&configs);
        assert_eq!(d.len(), 5);
        let shown = collapse(&d, &configs);
        let lines: Vec<String> = shown
            .iter()
            .map(|k| {
                let v: Vec<&str> = k
                    .values
                    .iter()
                    .map(|v| v.as_deref().unwrap_or("-"))
                    .collect();
                format!("{}: {}", k.key, v.join(" > "))
            })
            .collect();
        assert_eq!(
            lines,
            [
                "hg.0.p: \"\" > main",
                "project.extra: - > (3 keys)",
                "project.main.db: 3d > 7d",
            ]
        );
        // A single absent key stays a key.
        let c = flatten(&json!({"project": {"main": {"db": "3d", "x": 1}}}));
        let configs = [&a, &c];
        let shown = collapse(&diff(&configs), &configs);
        assert_eq!(
            shown
                .iter()
                .find(|k| k.key == "project.main.x")
                .unwrap()
                .values,
            [None, Some("1".into())]
        );
    }
}
