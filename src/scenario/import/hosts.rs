//! BOINC's statistics export of hosts, `host.xml` (docs/population.md, "A project's
//! own hosts").
//!
//! `sched/db_dump.cpp` writes it: an XML declaration, a `<hosts>` element, and one
//! `<host>` element per host (`write_host`), each field on a line of its own. The
//! detailed export (`<detail/>` in `db_dump_spec.xml`, the default for hosts) adds
//! `create_time`, `rpc_time`, `timezone`, `ncpus`, `p_fpops`, `p_iops`, `m_nbytes`,
//! `d_free`, `n_bwup`, `n_bwdown`, `avg_turnaround` and more, and `userid` when the
//! owner shows their hosts. GPUs are not separate fields: the scheduler writes a JSON
//! summary of the request's coprocessors into `host.misc` (`host_info_json` in
//! `sched/sched_host.cpp`, `COPROCS::summary_string_json` in `lib/coproc.cpp`),
//! which the export carries as `<misc><![CDATA[…]]></misc>`: `"gpus": [{"type":
//! "nvidia", "count": 1, …}]`, with no peak FLOPS.
//!
//! The file is read as a stream, one `<host>` element at a time, each parsed on its
//! own with its line numbers, so a million-record export needs memory for its
//! table only: [`HostRecord`] is a `Copy` struct of numbers, texts are indices into
//! one shared table of distinct strings.

use super::{Fields, ImportError, Interner};
use crate::server::resource::ProcType;
use std::io::BufRead;
use std::path::Path;
use std::sync::Arc;

/// GPU types of the export's JSON summary the simulator models, in
/// [`HostRecord::gpus`] order (`summary_json`'s type names).
pub const GPU_TYPES: [(&str, ProcType); 3] = [
    ("nvidia", ProcType::Nvidia),
    ("amd", ProcType::Amd),
    ("intel", ProcType::Intel),
];

/// GPU types BOINC reports that the simulator has no processor type for: the GPU
/// is left out (docs/fidelity.md).
const GPU_TYPES_IGNORED: [&str; 1] = ["apple"];

/// One host of the export: what the simulation uses and what later models will
/// (bandwidth, time zone), as numbers. Texts are indices into [`HostTable::strings`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HostRecord {
    /// The project's host id.
    pub id: u32,
    /// The owner (0 when the owner hides their hosts: no `<userid>`).
    pub userid: u32,
    /// Unix times of the host's creation and last scheduler RPC.
    pub create_time: i64,
    pub rpc_time: i64,
    /// Offset from UTC, seconds (`HOST_INFO::timezone`).
    pub timezone: i32,
    pub ncpus: u32,
    /// Per-CPU Whetstone FLOPS and Dhrystone IOPS.
    pub p_fpops: f64,
    pub p_iops: f64,
    /// RAM and free disk, bytes.
    pub m_nbytes: f64,
    pub d_free: f64,
    /// Average upload and download bandwidth, bytes/s (0: unknown).
    pub n_bwup: f32,
    pub n_bwdown: f32,
    /// Average turnaround of the host's jobs, seconds.
    pub avg_turnaround: f32,
    pub expavg_credit: f32,
    pub total_credit: f64,
    pub os_name: u32,
    pub os_version: u32,
    pub p_vendor: u32,
    pub p_model: u32,
    /// GPUs of each type of [`GPU_TYPES`].
    pub gpus: [u8; 3],
    /// The line of the record's `<host>` in the file, for messages.
    pub line: u32,
}

/// A parsed export: its records in file order and its distinct texts.
#[derive(Debug, Default)]
pub struct HostTable {
    pub records: Vec<HostRecord>,
    pub strings: Vec<Arc<str>>,
    /// Records left out because they report no CPU or no speed (`ncpus` or
    /// `p_fpops` 0: a host that never ran its benchmarks).
    pub skipped: u32,
}

impl HostTable {
    /// The text of index `k`.
    pub fn text(&self, k: u32) -> &Arc<str> {
        &self.strings[k as usize]
    }

    /// The latest `rpc_time` of the file: the export's "now".
    pub fn latest_rpc(&self) -> i64 {
        self.records.iter().map(|r| r.rpc_time).max().unwrap_or(0)
    }

    /// Bytes the table takes, for the capacity check.
    pub fn bytes(&self) -> u64 {
        (self.records.len() * std::mem::size_of::<HostRecord>()) as u64
            + self
                .strings
                .iter()
                .map(|s| s.len() as u64 + 48)
                .sum::<u64>()
    }
}

/// Reads the export at `path`, gzipped or not.
pub fn read(path: &Path) -> Result<HostTable, ImportError> {
    let shown = path.display().to_string();
    let r = super::open(path)?;
    parse(r, &shown)
}

/// Parses an export from `r`; `file` names it in messages.
pub fn parse(mut r: impl BufRead, file: &str) -> Result<HostTable, ImportError> {
    let mut table = HostTable::default();
    let mut strings = Interner::default();
    let mut line_no: u32 = 0;
    let mut raw = Vec::new();
    let mut chunk = String::new();
    let mut chunk_line = 0;
    let mut opened = false;
    let mut closed = false;
    loop {
        raw.clear();
        let n = r
            .read_until(b'\n', &mut raw)
            .map_err(|e| super::read_failure(file, line_no as usize, &e))?;
        if n == 0 {
            break;
        }
        line_no += 1;
        let line = std::str::from_utf8(&raw).map_err(|_| {
            ImportError::at(
                file,
                line_no,
                1,
                "not UTF-8 text; expected BOINC's host.xml",
            )
        })?;
        let t = line.trim();
        if !chunk.is_empty() || t.starts_with("<host>") {
            if chunk.is_empty() {
                if !opened || closed {
                    return Err(ImportError::at(
                        file,
                        line_no,
                        1,
                        "a <host> outside <hosts>; expected the <hosts> element of BOINC's host.xml around every host",
                    ));
                }
                chunk_line = line_no;
            }
            chunk.push_str(line);
            if t.ends_with("</host>") {
                let rec = record(&chunk, file, chunk_line, &mut strings)?;
                match rec {
                    Some(rec) => table.records.push(rec),
                    None => table.skipped += 1,
                }
                chunk.clear();
            }
            continue;
        }
        match t {
            "" => {}
            _ if t.starts_with("<?xml") && line_no == 1 => {}
            "<hosts>" if !opened => opened = true,
            "</hosts>" if opened && !closed => closed = true,
            _ => {
                let col = line.len() - line.trim_start().len() + 1;
                let shown: String = t.chars().take(40).collect();
                return Err(ImportError::at(
                    file,
                    line_no,
                    col as u32,
                    format!(
                        "unexpected `{shown}`; expected BOINC's host.xml: <hosts> with one <host> element per host, as db_dump writes it"
                    ),
                ));
            }
        }
    }
    if !chunk.is_empty() {
        return Err(ImportError::at(
            file,
            chunk_line,
            1,
            "this <host> has no </host>: the file ends inside it (truncated file?)",
        ));
    }
    if !closed {
        return Err(ImportError(format!(
            "{file}:{}: the file ends without </hosts>; expected BOINC's host.xml, complete (truncated file?)",
            line_no.max(1)
        )));
    }
    table.strings = strings.strings;
    Ok(table)
}

/// Parses one `<host>` element that starts at line `line0`; `None` for a host that
/// reports no CPU or speed.
fn record(
    text: &str,
    file: &str,
    line0: u32,
    strings: &mut Interner,
) -> Result<Option<HostRecord>, ImportError> {
    let doc = super::parse_xml(file, text, line0)?;
    let node = doc.root_element();
    let mut f = Fields {
        file,
        doc: &doc,
        node,
        line0,
        what: "a host".into(),
    };
    let id = f.req_num("id")?;
    let id = as_u32(&f, "id", id)?;
    f.what = format!("host {id}");
    let userid = match f.num_non_negative("userid")? {
        Some(u) => as_u32(&f, "userid", u)?,
        None => 0,
    };
    let time = |name: &str| -> Result<i64, ImportError> {
        Ok(f.num_non_negative(name)?.ok_or_else(|| f.missing(name))? as i64)
    };
    let create_time = time("create_time")?;
    let rpc_time = time("rpc_time")?;
    if rpc_time < create_time {
        let (n, _) = f.text("rpc_time").expect("read above");
        return Err(f.err(
            n,
            "rpc_time",
            format!("rpc_time {rpc_time} is before create_time {create_time}; expected the last contact after the host's creation"),
        ));
    }
    let ncpus = match f.num_non_negative("ncpus")? {
        Some(x) => x,
        // Older exports and hand-written files use the database column's name.
        None => f
            .num_non_negative("p_ncpus")?
            .ok_or_else(|| f.missing("ncpus"))?,
    };
    let ncpus = as_u32(&f, "ncpus", ncpus)?;
    let p_fpops = f
        .num_non_negative("p_fpops")?
        .ok_or_else(|| f.missing("p_fpops"))?;
    let p_iops = f
        .num_non_negative("p_iops")?
        .ok_or_else(|| f.missing("p_iops"))?;
    let m_nbytes = f
        .num_non_negative("m_nbytes")?
        .ok_or_else(|| f.missing("m_nbytes"))?;
    let d_free = f
        .num_non_negative("d_free")?
        .ok_or_else(|| f.missing("d_free"))?;
    let opt = |name: &str| f.num_non_negative(name).map(|x| x.unwrap_or(0.0));
    let n_bwup = opt("n_bwup")? as f32;
    let n_bwdown = opt("n_bwdown")? as f32;
    let avg_turnaround = opt("avg_turnaround")? as f32;
    let expavg_credit = opt("expavg_credit")? as f32;
    let total_credit = opt("total_credit")?;
    let timezone = f.num("timezone")?.unwrap_or(0.0);
    if timezone.abs() > 86_400.0 {
        let (n, _) = f.text("timezone").expect("read above");
        return Err(f.err(
            n,
            "timezone",
            format!("{timezone} s; expected an offset from UTC within a day"),
        ));
    }
    let mut text = |name: &str| strings.get(f.text(name).map_or("", |(_, t)| t));
    let os_name = text("os_name");
    let os_version = text("os_version");
    let p_vendor = text("p_vendor");
    let p_model = text("p_model");
    let gpus = gpus(&f)?;
    if ncpus == 0 || p_fpops == 0.0 {
        return Ok(None);
    }
    Ok(Some(HostRecord {
        id,
        userid,
        create_time,
        rpc_time,
        timezone: timezone as i32,
        ncpus,
        p_fpops,
        p_iops,
        m_nbytes,
        d_free,
        n_bwup,
        n_bwdown,
        avg_turnaround,
        expavg_credit,
        total_credit,
        os_name,
        os_version,
        p_vendor,
        p_model,
        gpus,
        line: line0,
    }))
}

/// A whole number that fits a `u32`.
fn as_u32(f: &Fields, name: &str, x: f64) -> Result<u32, ImportError> {
    if x >= 0.0 && x <= u32::MAX as f64 && x.fract() == 0.0 {
        Ok(x as u32)
    } else {
        let (n, _) = f.text(name).expect("a field just read");
        Err(f.err(
            n,
            name,
            format!("{x}; expected a whole number from 0 to {}", u32::MAX),
        ))
    }
}

/// The GPUs of the record's `misc` JSON summary, counted by type.
fn gpus(f: &Fields) -> Result<[u8; 3], ImportError> {
    let mut out = [0u8; 3];
    let Some((node, text)) = f.text("misc") else {
        return Ok(out);
    };
    if text.is_empty() {
        return Ok(out);
    }
    let v: serde_json::Value = serde_json::from_str(text).map_err(|e| {
        f.err(
            node,
            "misc",
            format!("not the JSON host summary BOINC's scheduler writes: {e}"),
        )
    })?;
    let Some(list) = v.get("gpus") else {
        return Ok(out);
    };
    let Some(list) = list.as_array() else {
        return Err(f.err(
            node,
            "misc",
            "`gpus` is not a list; expected [{\"type\": …, \"count\": …}]",
        ));
    };
    for g in list {
        let kind = g.get("type").and_then(|t| t.as_str()).unwrap_or("");
        let count = g.get("count").and_then(|c| c.as_u64());
        let Some(count) = count.filter(|&c| c <= 255) else {
            return Err(f.err(
                node,
                "misc",
                format!("GPU `{kind}` has no count from 0 to 255; expected \"count\": N"),
            ));
        };
        if let Some(k) = GPU_TYPES.iter().position(|(n, _)| *n == kind) {
            out[k] = out[k].saturating_add(count as u8);
        } else if !GPU_TYPES_IGNORED.contains(&kind) {
            let known: Vec<&str> = GPU_TYPES.iter().map(|(n, _)| *n).collect();
            return Err(f.err(
                node,
                "misc",
                format!(
                    "unknown GPU type `{kind}`; expected one of {}, or {} (ignored)",
                    known.join(", "),
                    GPU_TYPES_IGNORED.join(", ")
                ),
            ));
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const ONE: &str = r#"<?xml version="1.0" encoding="utf-8"?>
<hosts>
<host>
    <id>17</id>
    <userid>4</userid>
    <total_credit>1234.500000</total_credit>
    <expavg_credit>12.250000</expavg_credit>
    <expavg_time>1700000000.000000</expavg_time>
    <p_vendor>AuthenticAMD</p_vendor>
    <p_model>AMD Ryzen 7 5800X 8-Core Processor</p_model>
    <os_name>Linux Ubuntu</os_name>
    <os_version>Ubuntu 22.04.3 LTS [6.5.0-14-generic|libc 2.35]</os_version>
    <misc><![CDATA[{
    "client_version": "7.24.1",
    "gpus": [
        {
            "type": "nvidia",
            "model": "NVIDIA GeForce RTX 3060",
            "count": 2,
            "ram_mb": 12044,
            "driver_version": "53514",
            "opencl_version": "300"
        }
    ]
}]]></misc>
  <create_time>1690000000</create_time>
  <rpc_time>1700000000</rpc_time>
  <timezone>3600</timezone>
  <ncpus>16</ncpus>
  <p_fpops>5200000000.000000</p_fpops>
  <p_iops>21000000000.000000</p_iops>
  <p_membw>1000000000.000000</p_membw>
  <m_nbytes>33554432000.000000</m_nbytes>
  <m_cache>32768.000000</m_cache>
  <m_swap>2147483648.000000</m_swap>
  <d_total>500000000000.000000</d_total>
  <d_free>250000000000.000000</d_free>
  <n_bwup>1250000.000000</n_bwup>
  <n_bwdown>6250000.000000</n_bwdown>
  <avg_turnaround>43200.000000</avg_turnaround>
  <credit_per_cpu_sec>0.000000</credit_per_cpu_sec>
  <host_cpid>0123456789abcdef0123456789abcdef</host_cpid>
</host>
</hosts>
"#;

    fn parse_str(s: &str) -> Result<HostTable, ImportError> {
        parse(s.as_bytes(), "host.xml")
    }

    #[test]
    fn a_db_dump_record_reads_exactly() {
        let t = parse_str(ONE).unwrap();
        assert_eq!(t.records.len(), 1);
        let r = t.records[0];
        assert_eq!((r.id, r.userid), (17, 4));
        assert_eq!(
            (r.create_time, r.rpc_time, r.timezone),
            (1_690_000_000, 1_700_000_000, 3600)
        );
        assert_eq!(r.ncpus, 16);
        assert_eq!(r.p_fpops, 5.2e9);
        assert_eq!(r.p_iops, 2.1e10);
        assert_eq!(r.m_nbytes, 33_554_432_000.0);
        assert_eq!(r.d_free, 2.5e11);
        assert_eq!((r.n_bwup, r.n_bwdown), (1.25e6, 6.25e6));
        assert_eq!(r.avg_turnaround, 43_200.0);
        assert_eq!((r.expavg_credit, r.total_credit), (12.25, 1234.5));
        assert_eq!(r.gpus, [2, 0, 0]);
        assert_eq!(&**t.text(r.os_name), "Linux Ubuntu");
        assert_eq!(&**t.text(r.p_vendor), "AuthenticAMD");
        assert_eq!(&**t.text(r.p_model), "AMD Ryzen 7 5800X 8-Core Processor");
        assert_eq!(r.line, 3);
        assert_eq!(t.latest_rpc(), 1_700_000_000);
    }

    #[test]
    fn texts_are_kept_once() {
        let two =
            ONE.replace("</host>\n</hosts>", "</host>\n") + &ONE[ONE.find("<host>").unwrap()..];
        let t = parse_str(&two).unwrap();
        assert_eq!(t.records.len(), 2);
        assert_eq!(t.records[0].os_name, t.records[1].os_name);
        assert_eq!(t.records[1].line, 45);
        // "", and the four texts.
        assert_eq!(t.strings.len(), 4);
    }

    #[test]
    fn a_host_without_benchmarks_is_skipped() {
        let t = parse_str(&ONE.replace("<ncpus>16</ncpus>", "<ncpus>0</ncpus>")).unwrap();
        assert_eq!((t.records.len(), t.skipped), (0, 1));
    }

    fn err(s: &str) -> String {
        parse_str(s).unwrap_err().to_string()
    }

    #[test]
    fn a_bad_number_names_line_and_field() {
        let m = err(&ONE.replace("<p_fpops>5200000000.000000", "<p_fpops>5.2 GFLOPS"));
        assert_eq!(
            m,
            "host.xml:30:3: field `p_fpops` of host 17: `5.2 GFLOPS` is not a number; expected a finite number"
        );
    }

    #[test]
    fn a_missing_field_names_the_host() {
        let m = err(&ONE.replace("  <create_time>1690000000</create_time>\n", ""));
        assert_eq!(
            m,
            "host.xml:3:1: host 17 has no `create_time` field; expected <create_time>…</create_time>"
        );
    }

    #[test]
    fn an_unknown_gpu_type_is_refused() {
        let m = err(&ONE.replace("\"type\": \"nvidia\"", "\"type\": \"matrox\""));
        assert_eq!(
            m,
            "host.xml:13:5: field `misc` of host 17: unknown GPU type `matrox`; expected one of nvidia, amd, intel, or apple (ignored)"
        );
        let t = parse_str(&ONE.replace("\"type\": \"nvidia\"", "\"type\": \"apple\"")).unwrap();
        assert_eq!(t.records[0].gpus, [0, 0, 0]);
    }

    #[test]
    fn a_last_contact_before_creation_is_refused() {
        let m = err(&ONE.replace("<rpc_time>1700000000", "<rpc_time>1600000000"));
        assert_eq!(
            m,
            "host.xml:27:3: field `rpc_time` of host 17: rpc_time 1600000000 is before create_time 1690000000; expected the last contact after the host's creation"
        );
    }

    #[test]
    fn not_xml_is_refused() {
        let m = err("id,p_fpops\n1,2e9\n");
        assert!(
            m.starts_with("host.xml:1:1: unexpected `id,p_fpops`"),
            "{m}"
        );
        let m = err(&ONE.replace("</os_name>", "</os>"));
        assert!(m.starts_with("host.xml:11:"), "{m}");
        assert!(m.contains("not well-formed XML"), "{m}");
    }

    #[test]
    fn a_truncated_file_is_refused() {
        let cut = &ONE[..ONE.find("<d_free>").unwrap()];
        let m = err(cut);
        assert_eq!(
            m,
            "host.xml:3:1: this <host> has no </host>: the file ends inside it (truncated file?)"
        );
        let m = err(&ONE.replace("</hosts>\n", ""));
        assert!(m.contains("without </hosts>"), "{m}");
    }

    #[test]
    fn a_truncated_gzip_is_refused() {
        use std::io::Write;
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        gz.write_all(ONE.as_bytes()).unwrap();
        let bytes = gz.finish().unwrap();
        let dir = tempfile::tempdir().unwrap();
        // A gzip file under a name without `.gz` is still recognised.
        let whole = dir.path().join("host.xml");
        std::fs::write(&whole, &bytes).unwrap();
        assert_eq!(read(&whole).unwrap().records.len(), 1);
        let cut = dir.path().join("cut.xml.gz");
        std::fs::write(&cut, &bytes[..bytes.len() / 2]).unwrap();
        let m = read(&cut).unwrap_err().to_string();
        assert!(
            m.contains("cut.xml.gz: the compressed file ends early, after line"),
            "{m}"
        );
    }
}
