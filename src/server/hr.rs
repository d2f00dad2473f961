//! Homogeneous redundancy classes (`sched/hr.cpp`, spec backend §2.4.7).
//!
//! A class is an OS code plus a CPU code. Type 1 ("fine") uses the CPU model
//! family; type 2 ("coarse") only the vendor, with AMD folded into Intel. Hosts of
//! an unknown class never get HR work.

/// OS code of an `os_name` (spec backend §2.4.7): 128 other, 256 Linux, 384 Windows,
/// 512 Darwin, 640 FreeBSD, 768 Android; `None` = unknown.
fn os_code(os_name: &str) -> Option<i32> {
    let os = os_name.to_ascii_lowercase();
    if os.contains("android") {
        Some(768)
    } else if os.contains("linux") {
        Some(256)
    } else if os.contains("windows") {
        Some(384)
    } else if os.contains("darwin") {
        Some(512)
    } else if os.contains("freebsd") {
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
    let v = vendor.to_ascii_lowercase();
    if v.contains("intel") || v.contains("amd") {
        Some(2)
    } else if v.contains("power macintosh") || v.contains("powerpc") {
        Some(4)
    } else if v.contains("arm") {
        Some(22)
    } else {
        None
    }
}

/// Fine CPU code from the model family (a subset of `hr.cpp`'s table: the codes the
/// spec names, e.g. Intel Core2 = 21, AMD Athlon64 = 9).
fn fine_cpu(vendor: &str, model: &str) -> Option<i32> {
    let v = vendor.to_ascii_lowercase();
    let m = model.to_ascii_lowercase();
    if v.contains("intel") {
        if m.contains("core2") || m.contains("core(tm)2") {
            Some(21)
        } else if m.contains("xeon") {
            Some(20)
        } else if m.contains("pentium") {
            Some(15)
        } else {
            Some(1)
        }
    } else if v.contains("amd") {
        if m.contains("athlon64") || m.contains("athlon 64") {
            Some(9)
        } else if m.contains("opteron") {
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
pub fn hr_class(hr_type: i32, os_name: &str, vendor: &str, model: &str) -> Option<i32> {
    let os = os_code(os_name);
    match hr_type {
        1 => Some(os? + fine_cpu(vendor, model)?),
        2 => {
            let os = os?;
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
}
