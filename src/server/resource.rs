//! Processing resources: BOINC's processor types (CPU and the three GPU vendors) and
//! a host's coprocessors as the scheduler request describes them (spec backend §1.4
//! HOST, §2.4.4; BOINC `lib/common_defs.h` `PROC_TYPE_*`, `lib/coproc.h`).
//!
//! Both the server's host row and the simulated client hold a host's coprocessors as
//! plain [`Coproc`] data; only the server schedules by them here.

use super::hr::has;
use serde::{Deserialize, Serialize};

/// Number of processor types (`NPROC_TYPES`).
pub(crate) const N_RSC: usize = 4;

/// A processor type, with BOINC's numbers (`PROC_TYPE_CPU` 0, `PROC_TYPE_NVIDIA_GPU`
/// 1, `PROC_TYPE_AMD_GPU` 2, `PROC_TYPE_INTEL_GPU` 3). The scheduler fills a request
/// in descending type index: GPU types first, the CPU last (spec backend §2.4.4).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
#[repr(u8)]
pub enum ProcType {
    #[default]
    Cpu = 0,
    Nvidia = 1,
    Amd = 2,
    Intel = 3,
}

/// The CPU's index in per-resource arrays (`RSC_TYPE_CPU`).
pub const CPU: usize = ProcType::Cpu.index();

impl ProcType {
    /// Every type, by BOINC's number.
    pub(crate) const ALL: [ProcType; N_RSC] = [
        ProcType::Cpu,
        ProcType::Nvidia,
        ProcType::Amd,
        ProcType::Intel,
    ];

    /// BOINC's number, an index into per-resource arrays.
    pub const fn index(self) -> usize {
        self as usize
    }

    /// The name in BOINC's messages and in the outputs.
    pub fn name(self) -> &'static str {
        match self {
            ProcType::Cpu => "cpu",
            ProcType::Nvidia => "nvidia",
            ProcType::Amd => "amd",
            ProcType::Intel => "intel",
        }
    }
}

/// A GPU vendor as a scenario writes it (`type = "nvidia"`); the CPU is no
/// coprocessor, so it is not one of the choices.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum GpuType {
    Nvidia,
    Amd,
    Intel,
}

impl GpuType {
    pub fn proc_type(self) -> ProcType {
        match self {
            GpuType::Nvidia => ProcType::Nvidia,
            GpuType::Amd => ProcType::Amd,
            GpuType::Intel => ProcType::Intel,
        }
    }
}

/// One type of coprocessor of a host (`COPROC`: `type`, `count`, `peak_flops`), as
/// the client reports it in its request and the server keeps it with the host.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Coproc {
    pub kind: ProcType,
    /// Instances of this type.
    pub count: u32,
    /// Peak FLOPS of one instance.
    pub peak_flops: f64,
}

/// The host's coprocessor of type `t`, if it has one.
pub(crate) fn coproc_of(coprocs: &[Coproc], t: ProcType) -> Option<&Coproc> {
    coprocs.iter().find(|c| c.kind == t && c.count > 0)
}

/// BOINC platform names a scenario can give an app version (`platform` table of
/// the project). The first names of each operating system are the ones
/// [`host_platform`] gives.
pub(crate) const PLATFORMS: &[&str] = &[
    "x86_64-pc-linux-gnu",
    "aarch64-unknown-linux-gnu",
    "windows_x86_64",
    "x86_64-apple-darwin",
    "arm64-apple-darwin",
    "x86_64-pc-freebsd__elf",
    "arm-android-linux-gnu",
    "powerpc-apple-darwin",
];

/// The platform a host's client reports, from its OS and CPU vendor (64-bit
/// clients; BOINC's `HOST_INFO` platform names). `None`: an OS no platform names.
pub(crate) fn host_platform(os_name: &str, p_vendor: &str) -> Option<&'static str> {
    let (os, arm) = (os_name, has(p_vendor, "arm"));
    if has(os, "windows") {
        Some("windows_x86_64")
    } else if has(os, "android") {
        Some("arm-android-linux-gnu")
    } else if has(os, "linux") {
        Some(if arm {
            "aarch64-unknown-linux-gnu"
        } else {
            "x86_64-pc-linux-gnu"
        })
    } else if has(os, "darwin") {
        Some(if arm {
            "arm64-apple-darwin"
        } else if has(p_vendor, "power") {
            "powerpc-apple-darwin"
        } else {
            "x86_64-apple-darwin"
        })
    } else if has(os, "freebsd") {
        Some("x86_64-pc-freebsd__elf")
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn types_keep_boinc_numbers() {
        assert_eq!(
            ProcType::ALL.map(ProcType::index),
            [0, 1, 2, 3],
            "PROC_TYPE_CPU, NVIDIA, AMD, INTEL"
        );
        assert_eq!(GpuType::Amd.proc_type(), ProcType::Amd);
    }

    #[test]
    fn platforms_of_hosts() {
        assert_eq!(
            host_platform("Linux", "GenuineIntel"),
            Some("x86_64-pc-linux-gnu")
        );
        assert_eq!(
            host_platform("Microsoft Windows", "AuthenticAMD"),
            Some("windows_x86_64")
        );
        assert_eq!(host_platform("Darwin", "ARM"), Some("arm64-apple-darwin"));
        assert_eq!(host_platform("Haiku", "GenuineIntel"), None);
        for os in ["Linux", "Microsoft Windows", "Darwin", "FreeBSD", "Android"] {
            let p = host_platform(os, "GenuineIntel").expect("known OS");
            assert!(PLATFORMS.contains(&p), "{p}");
        }
    }

    #[test]
    fn a_coproc_with_no_instances_is_none() {
        let c = [Coproc {
            kind: ProcType::Nvidia,
            count: 0,
            peak_flops: 1e12,
        }];
        assert!(coproc_of(&c, ProcType::Nvidia).is_none());
        assert!(coproc_of(&c, ProcType::Amd).is_none());
    }
}
