//! Homogeneous redundancy classes (`sched/hr.cpp`, spec backend §2.4.7).
//!
//! A class is an OS code plus a CPU code. Type 1 ("fine") uses the CPU model
//! family; type 2 ("coarse") only the vendor, with AMD folded into Intel. Hosts of
//! an unknown class never get HR work.

/// Whether `text` contains `needle` (lowercase ASCII) ignoring ASCII case, as BOINC's
/// `strcasestr`: the same answer as lowercasing `text` first, without allocating a
/// string on every scheduler request.
pub(crate) fn has(text: &str, needle: &str) -> bool {
    text.as_bytes()
        .windows(needle.len())
        .any(|w| w.eq_ignore_ascii_case(needle.as_bytes()))
}

/// OS code of an `os_name` (spec backend §2.4.7): 128 other, 256 Linux, 384 Windows,
/// 512 Darwin, 640 FreeBSD, 768 Android; `None` = unknown.
fn os_code(os_name: &str) -> Option<i32> {
    let os = os_name;
    if has(os, "android") {
        Some(768)
    } else if has(os, "linux") {
        Some(256)
    } else if has(os, "windows") {
        Some(384)
    } else if has(os, "darwin") {
        Some(512)
    } else if has(os, "freebsd") {
        Some(640)
    } else if os.is_empty() {
        None
    } else {
        Some(128)
    }
}

/// Coarse CPU code from the vendor: Intel 2 (AMD mapped to Intel), PowerPC Mac 4,
/// ARM 22.
fn coarse_cpu(vendor: &str) -> Option<i32> {
    let v = vendor;
    if has(v, "intel") || has(v, "amd") {
        Some(2)
    } else if has(v, "power macintosh") || has(v, "powerpc") {
        Some(4)
    } else if has(v, "arm") {
        Some(22)
    } else {
        None
    }
}

/// Fine CPU code from the model family (a subset of `hr.cpp`'s table: the codes the
/// spec names, e.g. Intel Core2 = 21, AMD Athlon64 = 9).
fn fine_cpu(vendor: &str, model: &str) -> Option<i32> {
    let (v, m) = (vendor, model);
    if has(v, "intel") {
        if has(m, "core2") || has(m, "core(tm)2") {
            Some(21)
        } else if has(m, "xeon") {
            Some(20)
        } else if has(m, "pentium") {
            Some(15)
        } else {
            Some(1)
        }
    } else if has(v, "amd") {
        if has(m, "athlon64") || has(m, "athlon 64") {
            Some(9)
        } else if has(m, "opteron") {
            Some(10)
        } else {
            Some(8)
        }
    } else {
        // Other vendors have no model families: their fine code is the coarse one.
        coarse_cpu(vendor)
    }
}

/// The host's HR class for HR type `hr_type` (1 fine, 2 coarse); `None` = unknown
/// class, which never gets HR work.
pub(crate) fn hr_class(hr_type: i32, os_name: &str, vendor: &str, model: &str) -> Option<i32> {
    match hr_type {
        1 => Some(os_code(os_name)? + fine_cpu(vendor, model)?),
        2 => {
            let os = os_code(os_name)?;
            let cpu = coarse_cpu(vendor)?;
            // Coarse classes exist only for Windows, Linux, and Darwin on Intel or
            // PowerPC.
            let known = os == 256 || os == 384 || (os == 512 && (cpu == 2 || cpu == 4));
            known.then_some(os + cpu)
        }
        _ => Some(0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_follow_the_spec() {
        assert_eq!(hr_class(2, "Linux", "GenuineIntel", ""), Some(258));
        assert_eq!(
            hr_class(2, "Microsoft Windows", "AuthenticAMD", ""),
            Some(386)
        );
        assert_eq!(hr_class(2, "FreeBSD", "GenuineIntel", ""), None);
        assert_eq!(hr_class(2, "Darwin", "ARM", ""), None);
        assert_eq!(
            hr_class(1, "Linux", "GenuineIntel", "Intel Core2"),
            Some(277)
        );
        assert_eq!(
            hr_class(1, "Linux", "AuthenticAMD", "AMD Athlon64"),
            Some(265)
        );
        assert_eq!(hr_class(1, "", "GenuineIntel", "x"), None);
        // Vendors without model families: the fine code is the coarse one.
        assert_eq!(hr_class(1, "Darwin", "Power Macintosh", "G5"), Some(516));
        assert_eq!(hr_class(1, "Linux", "ARM", "Cortex-A72"), Some(278));
        assert_eq!(hr_class(1, "Linux", "RISC-V", "x"), None);
    }

    #[test]
    fn has_ignores_ascii_case_as_lowercasing_does() {
        for (text, needle) in [
            ("Microsoft WINDOWS 10", "windows"),
            ("GenuineIntel", "intel"),
            ("Darwin", "darwinx"),
            ("", "linux"),
            ("Ünïx LiNuX", "linux"),
            ("lin", "linux"),
        ] {
            assert_eq!(
                has(text, needle),
                text.to_ascii_lowercase().contains(needle)
            );
        }
        assert!(has("Intel(R) Core(TM)2 Duo", "core(tm)2"));
        assert!(!has("Xeon", "pentium"));
    }
}
