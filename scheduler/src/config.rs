//! The FDL configuration file: cgroup paths mapped to deadline parameters.
//!
//! ```toml
//! [cgroup.fdl]                  # /sys/fs/cgroup/fdl
//! deadline_rr = "200us"
//! deadline_wakeup = "100us"
//! ```
//!
//! Everything is validated before anything is applied; an error names the file, the line and the
//! cgroup. Parameters belong to first-level cgroups ("real-time containers"); their children share
//! the container by cpu.weight.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{bail, Result};
use serde::Deserialize;
use toml::Spanned;

/// Smallest and largest deadline accepted.
const DEADLINE_MIN_NS: u64 = 50_000;
const DEADLINE_MAX_NS: u64 = 1_000_000_000;

/// Deadline parameters of one cgroup, as applied.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Params {
    pub deadline_rr_ns: u64,
    /// 0: same as deadline_rr_ns.
    pub deadline_wakeup_ns: u64,
}

/// One configured cgroup.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// Absolute path under the cgroup v2 mount.
    pub path: PathBuf,
    pub params: Params,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    #[serde(default)]
    cgroup: BTreeMap<Spanned<String>, Spanned<RawParams>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawParams {
    deadline_rr: Option<String>,
    deadline_wakeup: Option<String>,
    guaranteed_shares: Option<i64>,
}

/// "200us", "5ms", "1s", "750000ns" -> nanoseconds.
pub fn parse_duration(text: &str) -> Result<u64> {
    let t = text.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let mult = match unit.trim() {
        "ns" => 1,
        "us" => 1_000,
        "ms" => 1_000_000,
        "s" => 1_000_000_000,
        _ => bail!("bad duration \"{text}\": write a whole number with a unit: ns, us, ms or s"),
    };
    let n: u64 = num
        .parse()
        .map_err(|_| anyhow::anyhow!("bad duration \"{text}\": write a whole number with a unit: ns, us, ms or s"))?;
    n.checked_mul(mult).ok_or_else(|| anyhow::anyhow!("duration \"{text}\" is too large"))
}

fn line_of(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())].matches('\n').count() + 1
}

/// Validates one entry's parameters; the error says what is wrong, not where (the caller adds it).
fn validate_params(raw: &RawParams) -> Result<Params> {
    let rr = raw.deadline_rr.as_deref().map(parse_duration).transpose()?.unwrap_or(0);
    let wakeup = raw.deadline_wakeup.as_deref().map(parse_duration).transpose()?.unwrap_or(0);
    if let Some(shares) = raw.guaranteed_shares {
        if !(0..=1_048_576).contains(&shares) {
            bail!("guaranteed_shares {shares} is out of range 0..=1048576 (1024 = one CPU)");
        }
        bail!(
            "guaranteed_shares is not supported by this version of scx_fdl yet; remove it (the \
             bandwidth guarantee would silently not hold)"
        );
    }
    if rr == 0 && raw.deadline_rr.is_some() {
        bail!("deadline_rr is 0: leave it out for a fair cgroup");
    }
    if wakeup > 0 && rr == 0 {
        bail!("deadline_wakeup set but deadline_rr is 0");
    }
    if rr == 0 {
        bail!("no parameters: give deadline_rr (and optionally deadline_wakeup)");
    }
    for (name, v) in [("deadline_rr", rr), ("deadline_wakeup", wakeup)] {
        if v != 0 && !(DEADLINE_MIN_NS..=DEADLINE_MAX_NS).contains(&v) {
            bail!("{name} {v} ns is out of range {DEADLINE_MIN_NS} ns ..= 1 s");
        }
    }
    if wakeup > rr {
        bail!("deadline_wakeup ({wakeup} ns) is longer than deadline_rr ({rr} ns)");
    }
    Ok(Params { deadline_rr_ns: rr, deadline_wakeup_ns: wakeup })
}

/// Resolves a configured path against the cgroup v2 mount and checks it can carry parameters. A
/// cgroup that does not exist yet is fine: it picks its parameters up when it is created.
fn resolve_path(cgroup_root: &Path, name: &str) -> Result<PathBuf> {
    let rel = name.strip_prefix(cgroup_root.to_str().unwrap_or("")).unwrap_or(name);
    let rel = rel.trim_matches('/');
    if rel.is_empty() || rel.split('/').any(|c| c.is_empty() || c == "." || c == "..") {
        bail!("not a cgroup path below {}", cgroup_root.display());
    }
    let path = cgroup_root.join(rel);
    if rel.contains('/') {
        bail!(
            "deadline parameters belong to first-level cgroups (real-time containers); {} is \
             nested: configure its first-level ancestor",
            path.display()
        );
    }
    if path.exists() && !path.join("cgroup.procs").exists() {
        bail!("{} exists but is not a cgroup", path.display());
    }
    Ok(path)
}

/// Parses and validates a configuration; nothing is applied unless all of it is valid.
pub fn parse(file_name: &str, text: &str, cgroup_root: &Path) -> Result<Vec<Entry>> {
    let file: File = toml::from_str(text).map_err(|e| {
        let line = e.span().map(|s| line_of(text, s.start)).unwrap_or(0);
        anyhow::anyhow!("{file_name}:{line}: {}", e.message().trim())
    })?;
    let mut entries = Vec::new();
    for (name, raw) in &file.cgroup {
        let line = line_of(text, name.span().start);
        let shown = cgroup_root.join(name.get_ref().trim_matches('/'));
        let path = resolve_path(cgroup_root, name.get_ref())
            .map_err(|e| anyhow::anyhow!("{file_name}:{line}: cgroup {}: {e}", shown.display()))?;
        let params = validate_params(raw.get_ref())
            .map_err(|e| anyhow::anyhow!("{file_name}:{line}: cgroup {}: {e}", path.display()))?;
        entries.push(Entry { path, params });
    }
    Ok(entries)
}

pub fn load(path: &Path, cgroup_root: &Path) -> Result<Vec<Entry>> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| anyhow::anyhow!("{}: cannot read: {e}", path.display()))?;
    parse(&path.display().to_string(), &text, cgroup_root)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn root() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("web")).unwrap();
        std::fs::write(dir.path().join("web/cgroup.procs"), "").unwrap();
        std::fs::create_dir(dir.path().join("plain-dir")).unwrap();
        std::fs::write(dir.path().join("a-file"), "").unwrap();
        dir
    }

    fn err(text: &str) -> String {
        let r = root();
        parse("fdl.toml", text, r.path()).unwrap_err().to_string()
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("200us").unwrap(), 200_000);
        assert_eq!(parse_duration("5ms").unwrap(), 5_000_000);
        assert_eq!(parse_duration("1s").unwrap(), 1_000_000_000);
        assert_eq!(parse_duration("750000ns").unwrap(), 750_000);
        for bad in ["200", "2.5ms", "200 parsecs", "ms", "-5ms", "99999999999999999999s"] {
            assert!(parse_duration(bad).is_err(), "{bad} accepted");
        }
    }

    #[test]
    fn a_valid_file() {
        let r = root();
        let text = "[cgroup.web]\ndeadline_rr = \"200us\"\ndeadline_wakeup = \"100us\"\n\n[cgroup.batch]\ndeadline_rr = \"5ms\"\n";
        let entries = parse("fdl.toml", text, r.path()).unwrap();
        assert_eq!(entries.len(), 2);
        let web = entries.iter().find(|e| e.path.ends_with("web")).unwrap();
        assert_eq!(web.params, Params { deadline_rr_ns: 200_000, deadline_wakeup_ns: 100_000 });
        // "batch" does not exist yet: accepted, picked up when created.
        assert!(entries.iter().any(|e| e.path == r.path().join("batch")));
    }

    #[test]
    fn errors_name_file_line_and_cgroup() {
        let e = err("# comment\n\n[cgroup.web]\ndeadline_wakeup = \"100us\"\n");
        assert!(e.starts_with("fdl.toml:3: cgroup "), "{e}");
        assert!(e.ends_with("/web: deadline_wakeup set but deadline_rr is 0"), "{e}");
    }

    #[test]
    fn unknown_keys_are_refused_with_their_line() {
        let e = err("[cgroup.web]\ndeadline_rr = \"1ms\"\ndeadline_r = \"1ms\"\n");
        assert!(e.starts_with("fdl.toml:3:") && e.contains("unknown field `deadline_r`"), "{e}");
        let e = err("[cgroups.web]\n");
        assert!(e.starts_with("fdl.toml:1:") && e.contains("unknown field `cgroups`"), "{e}");
    }

    #[test]
    fn bad_units_and_ranges() {
        assert!(err("[cgroup.web]\ndeadline_rr = \"200\"\n").contains("write a whole number with a unit"));
        assert!(err("[cgroup.web]\ndeadline_rr = 200\n").starts_with("fdl.toml:2:"));
        assert!(err("[cgroup.web]\ndeadline_rr = \"10us\"\n").contains("out of range"));
        assert!(err("[cgroup.web]\ndeadline_rr = \"2s\"\n").contains("out of range"));
        assert!(err("[cgroup.web]\ndeadline_rr = \"1ms\"\ndeadline_wakeup = \"2ms\"\n")
            .contains("longer than deadline_rr"));
        assert!(err("[cgroup.web]\ndeadline_rr = \"0ms\"\n").contains("deadline_rr is 0"));
        assert!(err("[cgroup.web]\n").contains("no parameters"));
    }

    #[test]
    fn guaranteed_shares_is_refused_until_implemented() {
        let e = err("[cgroup.web]\ndeadline_rr = \"1ms\"\nguaranteed_shares = 1024\n");
        assert!(e.contains("guaranteed_shares is not supported"), "{e}");
        assert!(err("[cgroup.web]\ndeadline_rr = \"1ms\"\nguaranteed_shares = -1\n").contains("out of range"));
    }

    #[test]
    fn paths_that_cannot_carry_parameters() {
        assert!(err("[cgroup.\"web/api\"]\ndeadline_rr = \"1ms\"\n").contains("first-level"));
        assert!(err("[cgroup.plain-dir]\ndeadline_rr = \"1ms\"\n").contains("is not a cgroup"));
        assert!(err("[cgroup.a-file]\ndeadline_rr = \"1ms\"\n").contains("is not a cgroup"));
        assert!(err("[cgroup.\"../etc\"]\ndeadline_rr = \"1ms\"\n").contains("not a cgroup path"));
    }

    #[test]
    fn absolute_paths_under_the_mount_are_accepted() {
        let r = root();
        let text = format!("[cgroup.\"{}/web\"]\ndeadline_rr = \"1ms\"\n", r.path().display());
        let entries = parse("fdl.toml", &text, r.path()).unwrap();
        assert_eq!(entries[0].path, r.path().join("web"));
    }
}
