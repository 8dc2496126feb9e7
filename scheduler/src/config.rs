//! The FDL configuration: cgroup paths mapped to FDL parameters, from a file or from `scx_fdl set`.
//!
//! ```toml
//! [cgroup.fdl]                  # /sys/fs/cgroup/fdl
//! deadline_rr = "200us"
//! deadline_wakeup = "100us"
//! guaranteed_shares = 7000      # 1024 = one CPU
//!
//! [cgroup."fdl/batch"]          # nested: a part of the parent's guarantee
//! guaranteed_shares = 512
//!
//! [cgroup."kubepods.slice/kubepods-burstable.slice/kubepods-burstable-podA.slice"]
//! deadline_rr = "5ms"           # any depth: a pod is a deadline container
//!
//! [cgroup."jobs/nightly"]       # any level: unused quota of its cpu.max carried over
//! burst_buffer = "200ms"
//!
//! # A pattern rule: every cgroup whose path matches, now or created later (glob syntax).
//! [cgroup."kubepods.slice/*/kubepods-*-pod*.slice/cri-containerd-*.scope"]
//! burst_buffer = "100ms"
//! ```
//!
//! Durations are humantime's syntax ("200us", "2.5ms", "1ms 500us").
//!
//! Everything is validated before anything is applied; an error names the file, the line and the
//! cgroup. A cgroup with deadlines, at any depth, is a deadline container: its whole subtree shares
//! the container by cpu.weight, so a deadline cgroup cannot be inside another. A first-level
//! container's deadline bandwidth is its share of the machine; a nested one's (a Kubernetes pod)
//! is its share through its ancestors (what cpu.weight gives it there), taken out of them, or its
//! guarantee if that is more. guaranteed_shares is 1024 per CPU on a cgroup whose parent has no
//! guarantee, at any depth; below a guaranteed cgroup, a cgroup's guaranteed_shares divide its
//! parent's guarantee among the siblings that have one.
//! burst_buffer is the burst buffer of the bandwidth-control patch that preceded cpu.max.burst
//! (seed 003): how much unused quota of its `cpu.max` a cgroup (at any level) may carry over into
//! later periods. Unlike `cpu.max.burst`, which the kernel caps at the quota, it may exceed the
//! quota; the larger of the two applies. It does nothing while the cgroup has no `cpu.max`.
//!
//! A name with a glob character (`*`, `?`, `[`) is a pattern rule: it applies to every cgroup whose
//! path matches (`*` never crosses a `/`), including cgroups created while scx_fdl runs, which
//! pick their parameters up within a second (`expand`). A cgroup named exactly by an entry takes
//! that entry; one matched by several patterns takes the most specific: the most path components
//! without a wildcard, then the most characters that are not wildcards, then the lowest in text
//! order. A pattern matches at one depth (its number
//! of components), so the depth rules apply to it as to a path; guaranteed_shares cannot be given
//! by a pattern (a guarantee is a promise that the machine must be able to keep: it is granted
//! per named cgroup, and a pattern could multiply it without bound).

use std::collections::{BTreeMap, HashMap};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

use anyhow::{bail, Result};
use serde::Deserialize;
use toml::Spanned;

/// Smallest and largest deadline accepted.
const DEADLINE_MIN_NS: u64 = 50_000;
const DEADLINE_MAX_NS: u64 = 1_000_000_000;
/// guaranteed_shares per CPU of a cgroup whose parent has no guarantee.
pub const SHARES_PER_CPU: u32 = 1024;
/// Largest guaranteed_shares accepted: 1024 CPUs.
const SHARES_MAX: u32 = 1024 * 1024;
/// Largest burst_buffer accepted.
const BUFFER_MAX_NS: u64 = 60_000_000_000;

/// FDL parameters of one cgroup, as applied. 0 means "not set" for each.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Params {
    pub deadline_rr_ns: u64,
    /// 0: same as deadline_rr_ns.
    pub deadline_wakeup_ns: u64,
    pub guaranteed_shares: u32,
    /// Unused cpu.max quota it may carry over (seed 003's burst buffer); 0: none.
    pub burst_buffer_ns: u64,
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

/// Parameters as written, before validation.
#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawParams {
    deadline_rr: Option<String>,
    deadline_wakeup: Option<String>,
    guaranteed_shares: Option<i64>,
    burst_buffer: Option<String>,
}

/// "200us", "2.5ms", "1s", "750000ns", "1ms 500us" (humantime's syntax) -> nanoseconds.
pub fn parse_duration(text: &str) -> Result<u64> {
    let d = humantime::parse_duration(text.trim()).map_err(|e| {
        anyhow::anyhow!("bad duration \"{text}\": {e}: write a number with a unit (ns, us, ms, s), e.g. 200us or 2.5ms")
    })?;
    u64::try_from(d.as_nanos()).map_err(|_| anyhow::anyhow!("duration \"{text}\" is too large"))
}

/// Nanoseconds as the shortest exact duration text ("200us", "5ms"). Not humantime's
/// format_duration: that writes 1500us as "1ms 500us", and tables want one number and one unit.
pub fn format_duration(ns: u64) -> String {
    match ns {
        0 => "0".into(),
        n if n % 1_000_000_000 == 0 => format!("{}s", n / 1_000_000_000),
        n if n % 1_000_000 == 0 => format!("{}ms", n / 1_000_000),
        n if n % 1_000 == 0 => format!("{}us", n / 1_000),
        n => format!("{n}ns"),
    }
}

fn line_of(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())].matches('\n').count() + 1
}

/// The 1-based column, in characters, of byte offset `offset` of `text`.
fn column_of(text: &str, offset: usize) -> usize {
    let before = text.get(..offset.min(text.len())).unwrap_or(text);
    before.rsplit('\n').next().unwrap_or("").chars().count() + 1
}

/// Validates a rule's parameters for its path (a cgroup or a pattern) at its depth.
fn validate_rule(raw: &RawParams, path: &Path) -> Result<Params> {
    let params = validate_params(raw)?;
    if params.guaranteed_shares > 0 && is_pattern(path) {
        bail!(
            "guaranteed_shares cannot be given by a pattern: a guarantee is granted per named cgroup \
             (name each cgroup that has one)"
        );
    }
    Ok(params)
}

/// Validates one cgroup's parameters; the error says what is wrong, not where (the caller adds it).
fn validate_params(raw: &RawParams) -> Result<Params> {
    let rr = raw.deadline_rr.as_deref().map(parse_duration).transpose()?.unwrap_or(0);
    let wakeup = raw.deadline_wakeup.as_deref().map(parse_duration).transpose()?.unwrap_or(0);
    let buffer = raw.burst_buffer.as_deref().map(parse_duration).transpose()?.unwrap_or(0);
    if buffer > BUFFER_MAX_NS {
        bail!("burst_buffer {} is out of range ..= 60s", format_duration(buffer));
    }
    if buffer == 0 && raw.burst_buffer.is_some() {
        bail!("burst_buffer is 0: leave it out for none");
    }
    let shares = match raw.guaranteed_shares {
        None => 0,
        Some(s) if (1..=SHARES_MAX as i64).contains(&s) => s as u32,
        Some(0) => bail!("guaranteed_shares is 0: leave it out for no guarantee"),
        Some(s) => bail!("guaranteed_shares {s} is out of range 1..={SHARES_MAX} (1024 = one CPU)"),
    };
    if rr == 0 && raw.deadline_rr.is_some() {
        bail!("deadline_rr is 0: leave it out for a fair cgroup");
    }
    if wakeup > 0 && rr == 0 {
        bail!("deadline_wakeup set but deadline_rr is 0");
    }
    if rr == 0 && shares == 0 && buffer == 0 {
        bail!("no parameters: give deadline_rr (and optionally deadline_wakeup), guaranteed_shares and/or burst_buffer");
    }
    for (name, v) in [("deadline_rr", rr), ("deadline_wakeup", wakeup)] {
        if v != 0 && !(DEADLINE_MIN_NS..=DEADLINE_MAX_NS).contains(&v) {
            bail!("{name} {} is out of range 50us ..= 1s", format_duration(v));
        }
    }
    if wakeup > rr {
        bail!("deadline_wakeup ({}) is longer than deadline_rr ({})", format_duration(wakeup), format_duration(rr));
    }
    Ok(Params { deadline_rr_ns: rr, deadline_wakeup_ns: wakeup, guaranteed_shares: shares, burst_buffer_ns: buffer })
}

/// Is this configured path a pattern rule (has a glob character)?
pub fn is_pattern(path: &Path) -> bool {
    path.to_str().is_some_and(|s| s.contains(['*', '?', '[']))
}

/// Resolves a configured path against the cgroup v2 mount. A cgroup that does not exist yet is
/// fine: it picks its parameters up when created. A pattern must be a valid glob.
pub fn resolve_path(cgroup_root: &Path, name: &str) -> Result<PathBuf> {
    let rel = name.strip_prefix(cgroup_root.to_str().unwrap_or("")).unwrap_or(name);
    let rel = rel.trim_matches('/');
    if rel.is_empty() || rel.split('/').any(|c| c.is_empty() || c == "." || c == "..") {
        bail!("not a cgroup path below {}", cgroup_root.display());
    }
    let path = cgroup_root.join(rel);
    if is_pattern(&path) {
        if rel.contains("**") {
            bail!("`**` is not supported: a pattern matches at one depth (one `*` per component)");
        }
        glob::Pattern::new(&path.to_string_lossy()).map_err(|e| anyhow::anyhow!("bad pattern: {e}"))?;
    } else if path.exists() && !path.join("cgroup.procs").exists() {
        bail!("{} exists but is not a cgroup", path.display());
    }
    Ok(path)
}

/// A cgroup that exists must have the cpu controller (its parent's cgroup.subtree_control has
/// `cpu`, so it has a cpu.weight): without it the kernel schedules its tasks as part of its
/// nearest ancestor that has one, and parameters given to it would silently do nothing.
pub fn check_controller(path: &Path) -> Result<()> {
    if is_pattern(path) || !path.join("cgroup.procs").exists() || path.join("cpu.weight").exists() {
        return Ok(());
    }
    let parent = path.parent().unwrap_or(path);
    bail!(
        "the cpu controller is not enabled for it, so scx_fdl never sees it as a cgroup of its own \
         and its parameters would do nothing: enable it with `echo +cpu > {}/cgroup.subtree_control`",
        parent.display()
    )
}

/// The entries in force for the cgroups that exist now: the rules that name a cgroup, and for each
/// existing cgroup that a pattern matches and no rule names, the most specific matching pattern's
/// parameters (see the module's documentation). Rules that name a cgroup not created yet stay in,
/// as they are (they pick their parameters up when it is created).
pub fn expand(rules: &[Entry]) -> Vec<Entry> {
    let mut out: Vec<Entry> = rules.iter().filter(|e| !is_pattern(&e.path)).cloned().collect();
    let mut taken: std::collections::HashSet<PathBuf> = out.iter().map(|e| e.path.clone()).collect();
    let mut patterns: Vec<&Entry> = rules.iter().filter(|e| is_pattern(&e.path)).collect();
    // Specificity: components without a wildcard, then characters that are not wildcards.
    let specific = |e: &Entry| {
        let text = e.path.to_string_lossy();
        let wild = |c: char| matches!(c, '*' | '?' | '[' | ']');
        (text.split('/').filter(|c| !c.contains(wild)).count(), text.chars().filter(|c| !wild(*c)).count())
    };
    patterns.sort_by(|a, b| specific(b).cmp(&specific(a)).then_with(|| a.path.cmp(&b.path)));
    for rule in patterns {
        let options = glob::MatchOptions { require_literal_separator: true, ..Default::default() };
        let Ok(found) = glob::glob_with(&rule.path.to_string_lossy(), options) else { continue };
        for path in found.flatten() {
            if path.join("cgroup.procs").exists() && taken.insert(path.clone()) {
                out.push(Entry { path, params: rule.params });
            }
        }
    }
    out.sort_by(|a, b| a.path.cmp(&b.path));
    out
}

/// May `outer` (a path or a pattern) name an ancestor of what `inner` (a path or a pattern) names?
/// Exact for paths; for patterns, true whenever some cgroup could be named by both at their
/// depths, so a conflict between rules is refused before any cgroup exists that shows it.
fn may_contain(outer: &Path, inner: &Path) -> bool {
    let (o, i): (Vec<_>, Vec<_>) = (outer.components().collect(), inner.components().collect());
    if o.len() >= i.len() {
        return false;
    }
    let prefix: PathBuf = i[..o.len()].iter().collect();
    let options = glob::MatchOptions { require_literal_separator: true, ..Default::default() };
    let matches = |pattern: &Path, text: &Path| {
        glob::Pattern::new(&pattern.to_string_lossy()).is_ok_and(|p| p.matches_path_with(text, options))
    };
    outer == prefix || matches(outer, &prefix) || matches(&prefix, outer)
}

/// Checks what only the whole configuration shows: a guarantee below a guaranteed cgroup divides
/// it level by level (its parent has one too); a deadline cgroup is not inside another.
fn check_whole(entries: &[Entry], cgroup_root: &Path) -> std::result::Result<(), (PathBuf, String)> {
    let by_path: HashMap<&Path, &Params> = entries.iter().map(|e| (e.path.as_path(), &e.params)).collect();
    for e in entries {
        let parent = e.path.parent().unwrap_or(cgroup_root);
        let guaranteed = |a: &Path| by_path.get(a).is_some_and(|p| p.guaranteed_shares > 0);
        // A guarantee whose parent has none is the machine's: fine unless one stands further up.
        if e.params.guaranteed_shares > 0 && !guaranteed(parent) {
            if let Some(above) = e.path.ancestors().skip(1).take_while(|a| *a != cgroup_root).find(|a| guaranteed(a)) {
                return Err((
                    e.path.clone(),
                    format!(
                        "it is below {}, which has a guarantee: guaranteed_shares below a guaranteed cgroup \
                         divide its guarantee level by level; give {} a guaranteed_shares too",
                        above.display(),
                        parent.display()
                    ),
                ));
            }
        }
        if e.params.deadline_rr_ns == 0 {
            continue;
        }
        if let Some(outer) =
            entries.iter().find(|o| o.params.deadline_rr_ns > 0 && may_contain(&o.path, &e.path))
        {
            return Err((
                e.path.clone(),
                format!(
                    "it is (or may be) inside {}, which has deadlines too: a deadline cgroup's whole subtree \
                     is one deadline container; give deadlines to one of them",
                    outer.path.display()
                ),
            ));
        }
    }
    Ok(())
}

/// The guarantee of every cgroup that has one, in CPUs: guaranteed_shares / 1024 where the parent
/// has none (at any depth); below a guaranteed cgroup, its guarantee split among the siblings by
/// their guaranteed_shares.
pub fn guarantees_cpus(entries: &[Entry], cgroup_root: &Path) -> HashMap<PathBuf, f64> {
    let shares: HashMap<&Path, u32> = entries
        .iter()
        .filter(|e| e.params.guaranteed_shares > 0)
        .map(|e| (e.path.as_path(), e.params.guaranteed_shares))
        .collect();
    let mut sibling_sums: HashMap<&Path, u64> = HashMap::new();
    for (path, s) in &shares {
        *sibling_sums.entry(path.parent().unwrap_or(cgroup_root)).or_default() += *s as u64;
    }
    fn resolve<'a>(
        path: &'a Path,
        root: &Path,
        shares: &HashMap<&'a Path, u32>,
        sums: &HashMap<&'a Path, u64>,
        memo: &mut HashMap<PathBuf, f64>,
    ) -> f64 {
        if let Some(v) = memo.get(path) {
            return *v;
        }
        let parent = path.parent().unwrap_or(root);
        let s = shares[path] as f64;
        let v = if parent == root || !shares.contains_key(parent) {
            s / SHARES_PER_CPU as f64
        } else {
            resolve(parent, root, shares, sums, memo) * s / sums[parent] as f64
        };
        memo.insert(path.to_path_buf(), v);
        v
    }
    let mut memo = HashMap::new();
    for path in shares.keys() {
        resolve(path, cgroup_root, &shares, &sibling_sums, &mut memo);
    }
    memo
}

/// Parses and validates a configuration; nothing is applied unless all of it is valid.
pub fn parse(file_name: &str, text: &str, cgroup_root: &Path) -> Result<Vec<Entry>> {
    let file: File = toml::from_str(text).map_err(|e| {
        let start = e.span().map(|s| s.start);
        let line = start.map(|s| line_of(text, s)).unwrap_or(0);
        let why = e.message().trim();
        if !why.is_empty() {
            return anyhow::anyhow!("{file_name}:{line}: {why}");
        }
        // The toml crate gives some errors no message (`''=`, a key without a value): say where.
        match start {
            Some(s) => anyhow::anyhow!("{file_name}:{line}: invalid TOML at column {}", column_of(text, s)),
            None => anyhow::anyhow!("{file_name}:{line}: invalid TOML"),
        }
    })?;
    let mut entries = Vec::new();
    let mut lines = HashMap::new();
    for (name, raw) in &file.cgroup {
        let line = line_of(text, name.span().start);
        let shown = cgroup_root.join(name.get_ref().trim_matches('/'));
        let path = resolve_path(cgroup_root, name.get_ref())
            .and_then(|path| check_controller(&path).map(|_| path))
            .map_err(|e| anyhow::anyhow!("{file_name}:{line}: cgroup {}: {e}", shown.display()))?;
        let params = validate_rule(raw.get_ref(), &path)
            .map_err(|e| anyhow::anyhow!("{file_name}:{line}: cgroup {}: {e}", path.display()))?;
        if lines.insert(path.clone(), line).is_some() {
            bail!("{file_name}:{line}: cgroup {}: configured twice", path.display());
        }
        entries.push(Entry { path, params });
    }
    check_whole(&entries, cgroup_root).map_err(|(path, e)| {
        anyhow::anyhow!("{file_name}:{}: cgroup {}: {e}", lines[&path], path.display())
    })?;
    Ok(entries)
}

/// A file counts as still being written while it changed less than this long ago.
const SETTLE: Duration = Duration::from_millis(200);
/// How long load() waits for a file being written to settle before refusing it.
const SETTLE_GIVE_UP: Duration = Duration::from_secs(1);

/// Reads and validates a configuration file; see read_settled() for when a file is read.
pub fn load(path: &Path, cgroup_root: &Path) -> Result<Vec<Entry>> {
    let text = read_settled(path, SETTLE, SETTLE_GIVE_UP)?;
    parse(&path.display().to_string(), &text, cgroup_root)
}

/// `scx_fdl check FILE`: the file loaded and validated exactly as the scheduler would, then one
/// line per cgroup with its parameters. A cgroup that does not exist yet is reported as such, not
/// as an error: the scheduler applies its parameters when it is created.
pub fn check(path: &Path, cgroup_root: &Path) -> Result<String> {
    let entries = load(path, cgroup_root)?;
    let plural = if entries.len() == 1 { "" } else { "s" };
    let mut out = format!("{}: valid, {} cgroup{plural}\n", path.display(), entries.len());
    for e in &entries {
        let p = e.params;
        let mut params = Vec::new();
        if p.deadline_rr_ns > 0 {
            params.push(format!("deadline_rr {}", format_duration(p.deadline_rr_ns)));
        }
        if p.deadline_wakeup_ns > 0 {
            params.push(format!("deadline_wakeup {}", format_duration(p.deadline_wakeup_ns)));
        }
        if p.guaranteed_shares > 0 {
            params.push(format!("guaranteed_shares {}", p.guaranteed_shares));
        }
        if p.burst_buffer_ns > 0 {
            params.push(format!("burst_buffer {}", format_duration(p.burst_buffer_ns)));
        }
        let presence = if e.path.exists() { "" } else { " (not present yet: applied when it is created)" };
        out += &format!("{}: {}{presence}\n", e.path.display(), params.join(", "));
        if let Some(note) = fair_order_note(&p, FAIR_DEADLINE_DEFAULT_NS, true) {
            out += &format!("  note: {note}\n");
        }
    }
    Ok(out)
}

/// Fair work's deadline_rr by default (--fair-deadline-us).
pub const FAIR_DEADLINE_DEFAULT_NS: u64 = 5_000_000;

/// What a cgroup's deadline does not do, said where it is set (the start-up and reload log, `scx_fdl
/// set`'s answer, `scx_fdl check`): a deadline container orders its work by its deadline only where
/// its deadline_rr is no looser than fair work's (`fair_ns`, --fair-deadline-us) or while it is
/// within a guarantee (fdl_entity_orders, policy/deadline.h). Without a guarantee, a looser deadline
/// would lose every tie to fair work, so its work waits as fair work, at its cpu.weight; its
/// starts are still counted against its deadline. A user who set it expects it to count for
/// something, and the setting is not an error (its misses are still reported), so it is said, not
/// refused. `default`: fair_ns is --fair-deadline-us's default (`scx_fdl check`, which has no
/// running scheduler to ask), not the running scheduler's value.
pub fn fair_order_note(p: &Params, fair_ns: u64, default: bool) -> Option<String> {
    (p.deadline_rr_ns > fair_ns && p.guaranteed_shares == 0).then(|| {
        let source = if default { " with the default --fair-deadline-us" } else { ", --fair-deadline-us" };
        format!(
            "deadline_rr {} is looser than fair work's deadline ({}{source}) and it has no guaranteed_shares: \
             its work waits as fair work, at its cpu.weight, and only its misses are counted against {}; \
             give it a guaranteed_shares, or a deadline_rr of at most {}, to order its work by its deadline",
            format_duration(p.deadline_rr_ns),
            format_duration(fair_ns),
            format_duration(p.deadline_rr_ns),
            format_duration(fair_ns)
        )
    })
}

/// What identifies a file's content without reading it.
fn stamp(path: &Path) -> Result<(u64, u64, SystemTime)> {
    let meta = std::fs::metadata(path).map_err(|e| anyhow::anyhow!("{}: cannot read: {e}", path.display()))?;
    let mtime = meta.modified().map_err(|e| anyhow::anyhow!("{}: no modification time: {e}", path.display()))?;
    Ok((meta.ino(), meta.len(), mtime))
}

/// The file's text, read only once it has stopped changing, so that a file caught half-written
/// (whose first part may well be valid on its own) is never taken for the whole: it is read when
/// it has been unchanged for `settle` (inode, size and mtime the same before and after the read,
/// and its mtime at least `settle` old, else it is watched for `settle` first). A file still
/// changing after `give_up` is refused. Writing the new file elsewhere and renaming it into place
/// (atomic) never waits; an editor that pauses longer than `settle` mid-write cannot be told from
/// one that finished.
fn read_settled(path: &Path, settle: Duration, give_up: Duration) -> Result<String> {
    let start = Instant::now();
    loop {
        let before = stamp(path)?;
        let fresh = before.2.elapsed().map_or(true, |age| age < settle); // in the future: fresh too
        if fresh {
            std::thread::sleep(settle);
        }
        let text = std::fs::read(path).map_err(|e| anyhow::anyhow!("{}: cannot read: {e}", path.display()))?;
        let after = stamp(path)?;
        if before == after && text.len() as u64 == after.1 {
            return String::from_utf8(text).map_err(|e| anyhow::anyhow!("{}: not UTF-8 text: {e}", path.display()));
        }
        if start.elapsed() >= give_up {
            bail!(
                "{}: still being written after {} ms (it changed while it was read); nothing was \
                 applied: write the new file elsewhere and rename it into place",
                path.display(),
                give_up.as_millis()
            );
        }
    }
}

/// `scx_fdl set CGROUP key=value ...`: the configuration with the assignments applied to CGROUP,
/// validated as a whole exactly like a file. `key=none` removes a parameter; a cgroup left with
/// none becomes fair again.
pub fn apply_set(entries: &[Entry], cgroup_root: &Path, cgroup: &str, assignments: &[String]) -> Result<Vec<Entry>> {
    let path = resolve_path(cgroup_root, cgroup)
        .and_then(|path| check_controller(&path).map(|_| path))
        .map_err(|e| anyhow::anyhow!("cgroup {cgroup}: {e}"))?;
    if assignments.is_empty() {
        bail!(
            "cgroup {}: nothing to set: give key=value (deadline_rr, deadline_wakeup, guaranteed_shares, burst_buffer)",
            path.display()
        );
    }
    // What is in force for it: its own rule's parameters, or those of the pattern that covers it
    // (expand). Merged with its own rule's only, a pattern's deadline was dropped by a `set` of
    // another parameter (`web-*` with deadline_rr 4ms, then `set web-1 burst_buffer=100ms`: web-1
    // lost its deadline, the named rule shadowing the pattern).
    let old = match entries.iter().find(|e| e.path == path) {
        Some(e) => e.params,
        None => expand(entries).into_iter().find(|e| e.path == path).map(|e| e.params).unwrap_or_default(),
    };
    let mut raw = RawParams {
        deadline_rr: (old.deadline_rr_ns > 0).then(|| format_duration(old.deadline_rr_ns)),
        deadline_wakeup: (old.deadline_wakeup_ns > 0).then(|| format_duration(old.deadline_wakeup_ns)),
        guaranteed_shares: (old.guaranteed_shares > 0).then_some(old.guaranteed_shares as i64),
        burst_buffer: (old.burst_buffer_ns > 0).then(|| format_duration(old.burst_buffer_ns)),
    };
    for a in assignments {
        let err = |msg: String| anyhow::anyhow!("cgroup {}: {a}: {msg}", path.display());
        let (key, value) = a.split_once('=').ok_or_else(|| err("write key=value".into()))?;
        let value = value.trim();
        let clear = value == "none";
        match key.trim() {
            "deadline_rr" => raw.deadline_rr = (!clear).then(|| value.to_string()),
            "deadline_wakeup" => raw.deadline_wakeup = (!clear).then(|| value.to_string()),
            "burst_buffer" => raw.burst_buffer = (!clear).then(|| value.to_string()),
            "guaranteed_shares" => {
                raw.guaranteed_shares = if clear {
                    None
                } else {
                    Some(value.parse().map_err(|_| err("guaranteed_shares takes a whole number (1024 = one CPU) or none".into()))?)
                }
            }
            other => return Err(err(format!(
                "unknown parameter `{other}`: expected deadline_rr, deadline_wakeup, guaranteed_shares or burst_buffer"
            ))),
        }
    }
    let mut out: Vec<Entry> = entries.iter().filter(|e| e.path != path).cloned().collect();
    let cleared = raw.deadline_rr.is_none()
        && raw.deadline_wakeup.is_none()
        && raw.guaranteed_shares.is_none()
        && raw.burst_buffer.is_none();
    if !cleared {
        let params = validate_rule(&raw, &path).map_err(|e| anyhow::anyhow!("cgroup {}: {e}", path.display()))?;
        out.push(Entry { path, params });
    }
    out.sort_by(|a, b| a.path.cmp(&b.path));
    check_whole(&out, cgroup_root).map_err(|(p, e)| anyhow::anyhow!("cgroup {}: {e}", p.display()))?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn root() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("web")).unwrap();
        std::fs::write(dir.path().join("web/cgroup.procs"), "").unwrap();
        std::fs::write(dir.path().join("web/cpu.weight"), "100\n").unwrap();
        // A cgroup whose parent does not give it the cpu controller: no cpu.weight.
        std::fs::create_dir(dir.path().join("no-cpu")).unwrap();
        std::fs::write(dir.path().join("no-cpu/cgroup.procs"), "").unwrap();
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
        assert_eq!(parse_duration("2.5ms").unwrap(), 2_500_000);
        assert_eq!(parse_duration("1ms 500us").unwrap(), 1_500_000);
        for bad in ["200", "200 parsecs", "ms", "-5ms", "1.5ns", "99999999999999999999s", "9999999999h"] {
            let e = parse_duration(bad).unwrap_err().to_string();
            assert!(e.starts_with(&format!("bad duration \"{bad}\": ")) || e.contains("too large"), "{bad}: {e}");
        }
        let e = parse_duration("200").unwrap_err().to_string();
        assert!(e.ends_with(": write a number with a unit (ns, us, ms, s), e.g. 200us or 2.5ms"), "{e}");
    }

    #[test]
    fn a_valid_file() {
        let r = root();
        let text = "[cgroup.web]\ndeadline_rr = \"200us\"\ndeadline_wakeup = \"100us\"\n\n[cgroup.batch]\ndeadline_rr = \"5ms\"\n";
        let entries = parse("fdl.toml", text, r.path()).unwrap();
        assert_eq!(entries.len(), 2);
        let web = entries.iter().find(|e| e.path.ends_with("web")).unwrap();
        assert_eq!(web.params, Params { deadline_rr_ns: 200_000, deadline_wakeup_ns: 100_000, ..Default::default() });
        // "batch" does not exist yet: accepted, picked up when created.
        assert!(entries.iter().any(|e| e.path == r.path().join("batch")));
    }

    #[test]
    fn a_toml_error_without_a_message_says_where() {
        // The toml crate's error for a key without a value has an empty message (found by the
        // property test below, 2026-12-05): the line alone said nothing.
        assert_eq!(err("''="), "fdl.toml:1: invalid TOML at column 4");
        assert_eq!(err("# x\n[cgroup.web]\n'/*'="), "fdl.toml:3: invalid TOML at column 6");
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
        assert!(err("[cgroup.web]\ndeadline_rr = \"200\"\n").contains("write a number with a unit"));
        assert!(err("[cgroup.web]\ndeadline_rr = 200\n").starts_with("fdl.toml:2:"));
        assert!(err("[cgroup.web]\ndeadline_rr = \"10us\"\n").contains("out of range"));
        assert!(err("[cgroup.web]\ndeadline_rr = \"2s\"\n").contains("out of range"));
        assert!(err("[cgroup.web]\ndeadline_rr = \"1ms\"\ndeadline_wakeup = \"2ms\"\n")
            .contains("longer than deadline_rr"));
        assert!(err("[cgroup.web]\ndeadline_rr = \"0ms\"\n").contains("deadline_rr is 0"));
        assert!(err("[cgroup.web]\n").contains("no parameters"));
    }

    #[test]
    fn guaranteed_shares() {
        let r = root();
        let text = "[cgroup.web]\nguaranteed_shares = 2048\n\n[cgroup.\"web/a\"]\nguaranteed_shares = 300\n\n\
                    [cgroup.\"web/b\"]\nguaranteed_shares = 100\n\n[cgroup.\"web/b/c\"]\nguaranteed_shares = 5\n";
        let entries = parse("fdl.toml", text, r.path()).unwrap();
        let g = guarantees_cpus(&entries, r.path());
        assert_eq!(g[&r.path().join("web")], 2.0);
        assert_eq!(g[&r.path().join("web/a")], 1.5);
        assert_eq!(g[&r.path().join("web/b")], 0.5);
        assert_eq!(g[&r.path().join("web/b/c")], 0.5, "an only child gets all of its parent's");
        assert!(err("[cgroup.web]\nguaranteed_shares = 0\n").contains("guaranteed_shares is 0"));
        assert!(err("[cgroup.web]\nguaranteed_shares = -1\n").contains("out of range"));
        assert!(err("[cgroup.web]\nguaranteed_shares = 2000000\n").contains("out of range"));
        assert!(err("[cgroup.web]\nguaranteed_shares = \"1024\"\n").starts_with("fdl.toml:2:"));
    }

    #[test]
    fn burst_buffer_at_any_level() {
        let r = root();
        let text = "[cgroup.\"web/pod/ctr\"]\nburst_buffer = \"200ms\"\n";
        let entries = parse("fdl.toml", text, r.path()).unwrap();
        assert_eq!(entries[0].params, Params { burst_buffer_ns: 200_000_000, ..Default::default() });
        assert!(err("[cgroup.web]\nburst_buffer = \"0ms\"\n").contains("burst_buffer is 0"));
        assert!(err("[cgroup.web]\nburst_buffer = \"61s\"\n").contains("out of range"));
        assert!(err("[cgroup.web]\nburst_buffer = \"200\"\n").contains("write a number with a unit"));
        let set = apply_set(&entries, r.path(), "web/pod/ctr", &["burst_buffer=none".into()]).unwrap();
        assert!(set.is_empty(), "clearing its only parameter removes the entry");
        let set = apply_set(&[], r.path(), "web", &["burst_buffer=50ms".into()]).unwrap();
        assert_eq!(set[0].params.burst_buffer_ns, 50_000_000);
    }

    #[test]
    fn pattern_rules_match_existing_cgroups_at_their_depth() {
        let r = root();
        let pod = "kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod1_2.slice";
        for d in [format!("{pod}/cri-containerd-a.scope"), format!("{pod}/cri-containerd-b.scope"), "web-1".into(), "web-2/x".into()] {
            std::fs::create_dir_all(r.path().join(&d)).unwrap();
            std::fs::write(r.path().join(&d).join("cgroup.procs"), "").unwrap();
            std::fs::write(r.path().join(&d).join("cpu.weight"), "100\n").unwrap();
        }
        std::fs::write(r.path().join("web-2/cgroup.procs"), "").unwrap();
        std::fs::write(r.path().join("web-2/cpu.weight"), "100\n").unwrap();
        std::fs::create_dir(r.path().join("web-3")).unwrap(); // not a cgroup: no cgroup.procs
        let text = "[cgroup.\"kubepods.slice/*/kubepods-*-pod*.slice/cri-containerd-*.scope\"]\nburst_buffer = \"100ms\"\n\n\
                    [cgroup.\"kubepods.slice/*/*/cri-containerd-b.scope\"]\nburst_buffer = \"300ms\"\n\n\
                    [cgroup.\"web-*\"]\ndeadline_rr = \"5ms\"\n\n[cgroup.web-2]\ndeadline_rr = \"9ms\"\n";
        let rules = parse("fdl.toml", text, r.path()).unwrap();
        let got: Vec<(String, Params)> = expand(&rules)
            .into_iter()
            .map(|e| (e.path.strip_prefix(r.path()).unwrap().display().to_string(), e.params))
            .collect();
        let want = vec![
            (format!("{pod}/cri-containerd-a.scope"), Params { burst_buffer_ns: 100_000_000, ..Default::default() }),
            // the more specific pattern wins
            (format!("{pod}/cri-containerd-b.scope"), Params { burst_buffer_ns: 300_000_000, ..Default::default() }),
            ("web-1".into(), Params { deadline_rr_ns: 5_000_000, ..Default::default() }),
            // a rule naming the cgroup wins over a pattern; `*` does not cross `/` (web-2/x)
            ("web-2".into(), Params { deadline_rr_ns: 9_000_000, ..Default::default() }),
        ];
        assert_eq!(got, want);
        // Created later: matched at the next expansion.
        std::fs::create_dir(r.path().join("web-4")).unwrap();
        std::fs::write(r.path().join("web-4/cgroup.procs"), "").unwrap();
        assert!(expand(&rules).iter().any(|e| e.path.ends_with("web-4")));
    }

    #[test]
    fn a_cgroup_without_the_cpu_controller_is_refused() {
        let e = err("[cgroup.no-cpu]\ndeadline_rr = \"1ms\"\n");
        assert!(e.starts_with("fdl.toml:1: cgroup "), "{e}");
        assert!(e.contains("no-cpu: the cpu controller is not enabled for it"), "{e}");
        assert!(e.contains("echo +cpu > ") && e.contains("/cgroup.subtree_control"), "{e}");
        let r = root();
        let set = apply_set(&[], r.path(), "no-cpu", &["deadline_rr=1ms".into()]).unwrap_err().to_string();
        assert!(set.contains("the cpu controller is not enabled for it"), "{set}");
        // With the controller, and not present yet: fine.
        parse("fdl.toml", "[cgroup.web]\ndeadline_rr = \"1ms\"\n[cgroup.later]\ndeadline_rr = \"1ms\"\n", r.path()).unwrap();
    }

    #[test]
    fn pattern_rules_are_validated() {
        assert!(err("[cgroup.\"web-*\"]\nguaranteed_shares = 100\n").contains("guaranteed_shares cannot be given by a pattern"));
        assert!(err("[cgroup.\"a/*\"]\ndeadline_rr = \"1ms\"\n[cgroup.\"a/b/c\"]\ndeadline_rr = \"1ms\"\n")
            .contains("may be) inside /"));
        assert!(err("[cgroup.\"a/b\"]\ndeadline_rr = \"1ms\"\n[cgroup.\"a/*/c\"]\ndeadline_rr = \"1ms\"\n")
            .contains("inside /"));
        assert!(err("[cgroup.\"a/**\"]\nburst_buffer = \"1ms\"\n").contains("`**` is not supported"));
        assert!(err("[cgroup.\"web-[\"]\nburst_buffer = \"1ms\"\n").contains("bad pattern"));
        let r = root();
        let e = apply_set(&[], r.path(), "web-*", &["guaranteed_shares=10".into()]).unwrap_err().to_string();
        assert!(e.contains("cannot be given by a pattern"), "{e}");
        assert_eq!(apply_set(&[], r.path(), "web-*", &["deadline_rr=2ms".into()]).unwrap().len(), 1);
    }

    #[test]
    fn a_guarantee_below_a_guaranteed_cgroup_needs_its_parents() {
        let e = err("[cgroup.web]\nguaranteed_shares = 1024\n\n[cgroup.\"web/api/v1\"]\nguaranteed_shares = 100\n");
        assert!(e.starts_with("fdl.toml:4: cgroup "), "{e}");
        assert!(e.contains("/web/api/v1: it is below ") && e.contains("give ") && e.contains("/web/api a guaranteed_shares"), "{e}");
    }

    #[test]
    fn deadlines_and_guarantees_at_any_depth() {
        let r = root();
        let pod = "kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod1.slice";
        let text = format!(
            "[cgroup.web]\ndeadline_rr = \"1ms\"\n\n[cgroup.\"{pod}\"]\ndeadline_rr = \"5ms\"\nguaranteed_shares = 512\n\n\
             [cgroup.\"{pod}/a\"]\nguaranteed_shares = 3\n\n[cgroup.\"{pod}/b\"]\nguaranteed_shares = 1\n"
        );
        let entries = parse("fdl.toml", &text, r.path()).unwrap();
        let g = guarantees_cpus(&entries, r.path());
        assert_eq!(g[&r.path().join(pod)], 0.5, "no guaranteed parent: 1024 per CPU, at any depth");
        assert_eq!(g[&r.path().join(pod).join("a")], 0.375, "below it, a part of it");
        // (How such guarantees are granted: guarantee::tests::a_nested_guarantee_without_a_guaranteed_parent_is_the_machines.)
        let e = err(&format!("[cgroup.\"{pod}\"]\ndeadline_rr = \"5ms\"\n[cgroup.\"{pod}/a\"]\ndeadline_rr = \"1ms\"\n"));
        assert!(e.contains("/a: it is (or may be) inside ") && e.contains("has deadlines too"), "{e}");
    }

    #[test]
    fn paths_that_cannot_carry_parameters() {
        assert!(err("[cgroup.plain-dir]\ndeadline_rr = \"1ms\"\n").contains("is not a cgroup"));
        assert!(err("[cgroup.a-file]\ndeadline_rr = \"1ms\"\n").contains("is not a cgroup"));
        assert!(err("[cgroup.\"../etc\"]\ndeadline_rr = \"1ms\"\n").contains("not a cgroup path"));
        let e = err("[cgroup.web]\ndeadline_rr = \"1ms\"\n[cgroup.\"/web/\"]\ndeadline_rr = \"2ms\"\n");
        assert!(e.contains("configured twice"), "{e}");
    }

    #[test]
    fn set_merges_validates_and_clears() {
        let r = root();
        let base = parse("fdl.toml", "[cgroup.web]\ndeadline_rr = \"1ms\"\n", r.path()).unwrap();
        let set = |args: &[&str]| {
            let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
            apply_set(&base, r.path(), "web", &args)
        };
        let out = set(&["deadline_wakeup=500us", "guaranteed_shares=1024"]).unwrap();
        assert_eq!(
            out[0].params,
            Params { deadline_rr_ns: 1_000_000, deadline_wakeup_ns: 500_000, guaranteed_shares: 1024, ..Default::default() }
        );
        assert!(set(&["deadline_rr=none"]).unwrap().is_empty(), "no parameters left: fair again");
        let bad = [
            ("deadline_rr=2ms", "deadline_wakeup=3ms", "longer than deadline_rr"),
            ("deadline_rr=5", "deadline_rr=5ms", "write a number with a unit"),
            ("latency=1ms", "deadline_rr=1ms", "unknown parameter `latency`"),
            ("guaranteed_shares=lots", "deadline_rr=1ms", "whole number"),
            ("deadline_rr", "deadline_rr=1ms", "write key=value"),
        ];
        for (a, b, want) in bad {
            let e = set(&[b, a]).unwrap_err().to_string();
            assert!(e.contains(want) && e.contains("/web"), "{a}: {e}");
        }
        assert!(apply_set(&base, r.path(), "a-file", &["deadline_rr=1ms".into()])
            .unwrap_err()
            .to_string()
            .contains("is not a cgroup"));
        assert!(apply_set(&base, r.path(), "web", &[]).unwrap_err().to_string().contains("nothing to set"));
        // A guarantee below a guaranteed cgroup divides it level by level...
        let with_child = apply_set(&set(&["guaranteed_shares=1024"]).unwrap(), r.path(), "web/x",
                                   &["guaranteed_shares=10".into()]).unwrap();
        let e = apply_set(&with_child, r.path(), "web/x/y/z", &["guaranteed_shares=10".into()]).unwrap_err();
        assert!(e.to_string().contains("give") && e.to_string().contains("/web/x/y a guaranteed_shares"), "{e}");
        // ...and without its parent's it is a guarantee of the machine.
        let alone = apply_set(&with_child, r.path(), "web", &["guaranteed_shares=none".into()]).unwrap();
        assert_eq!(guarantees_cpus(&alone, r.path())[&r.path().join("web/x")], 10.0 / 1024.0);
    }

    #[test]
    fn set_on_a_cgroup_a_pattern_covers_keeps_the_patterns_parameters() {
        let r = root();
        let base = parse("fdl.toml", "[cgroup.\"we*\"]\ndeadline_rr = \"4ms\"\n", r.path()).unwrap();
        let out = apply_set(&base, r.path(), "web", &["burst_buffer=100ms".into()]).unwrap();
        let web = out.iter().find(|e| e.path == r.path().join("web")).expect("web named");
        assert_eq!(web.params, Params { deadline_rr_ns: 4_000_000, burst_buffer_ns: 100_000_000, ..Default::default() });
        assert!(out.iter().any(|e| is_pattern(&e.path)), "the pattern stays for the others");
        assert_eq!(expand(&out).iter().find(|e| e.path == r.path().join("web")).unwrap().params, web.params);
    }

    #[test]
    fn durations_format_back() {
        for ns in [200_000, 5_000_000, 1_000_000_000, 1_500, 7] {
            assert_eq!(parse_duration(&format_duration(ns)).unwrap(), ns);
        }
    }

    #[test]
    fn check_reports_every_cgroup_and_which_are_not_present_yet() {
        let r = root();
        let file = r.path().join("fdl.toml");
        std::fs::write(&file, "[cgroup.web]\ndeadline_rr = \"1ms\"\ndeadline_wakeup = \"500us\"\n\n\
                               [cgroup.batch]\nguaranteed_shares = 512\n").unwrap();
        let root = r.path().display();
        assert_eq!(
            check(&file, r.path()).unwrap(),
            format!(
                "{}: valid, 2 cgroups\n{root}/batch: guaranteed_shares 512 (not present yet: applied when it is \
                 created)\n{root}/web: deadline_rr 1ms, deadline_wakeup 500us\n",
                file.display()
            )
        );
        std::fs::write(&file, "[cgroup.web]\ndeadline_rr = \"1ms\"\n\n[cgroup.batch]\ndeadline_rr = \"9s\"\n").unwrap();
        assert_eq!(
            check(&file, r.path()).unwrap_err().to_string(),
            format!("{}:4: cgroup {root}/batch: deadline_rr 9s is out of range 50us ..= 1s", file.display())
        );
        let e = check(&r.path().join("missing.toml"), r.path()).unwrap_err().to_string();
        assert!(e.starts_with(&format!("{root}/missing.toml: cannot read: ")), "{e}");
    }

    #[test]
    fn a_deadline_looser_than_fair_work_without_a_guarantee_is_said_to_order_nothing() {
        let p = |rr_ms: u64, shares: u32| Params {
            deadline_rr_ns: rr_ms * 1_000_000,
            guaranteed_shares: shares,
            ..Default::default()
        };
        let fair = 5_000_000;
        let note = fair_order_note(&p(20, 0), fair, false).expect("20 ms without a guarantee");
        assert!(note.starts_with("deadline_rr 20ms is looser than fair work's deadline (5ms, --fair-deadline-us)"), "{note}");
        assert!(note.contains("a deadline_rr of at most 5ms"), "{note}");
        // Ordered by its deadline: no looser than fair work's (a tie orders), or with a guarantee.
        for (rr, shares) in [(5, 0), (4, 0), (20, 300), (0, 300), (0, 0)] {
            assert_eq!(fair_order_note(&p(rr, shares), fair, false), None, "{rr} ms, {shares} shares");
        }
        // Against the fair deadline the scheduler runs with (--fair-deadline-us 30000).
        assert_eq!(fair_order_note(&p(20, 0), 30_000_000, false), None);

        let r = root();
        let file = r.path().join("fdl.toml");
        std::fs::write(&file, "[cgroup.loose]\ndeadline_rr = \"20ms\"\n\n[cgroup.tight]\ndeadline_rr = \"4ms\"\n").unwrap();
        let out = check(&file, r.path()).unwrap();
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines.len(), 4, "{out}");
        assert!(lines[1].ends_with("/loose: deadline_rr 20ms (not present yet: applied when it is created)"), "{out}");
        assert!(
            lines[2].starts_with("  note: deadline_rr 20ms is looser than fair work's deadline (5ms with the default --fair-deadline-us)"),
            "{out}"
        );
        assert!(lines[3].ends_with("/tight: deadline_rr 4ms (not present yet: applied when it is created)"), "{out}");
    }

    #[test]
    fn the_packaged_example_is_valid_and_so_are_its_commented_examples() {
        let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("../packaging/fdl.toml");
        let r = root();
        assert!(check(&example, r.path()).unwrap().ends_with(": valid, 0 cgroups\n"));
        let text = std::fs::read_to_string(&example).unwrap();
        let uncommented: Vec<&str> = text.lines().map(|l| l.strip_prefix("# ").unwrap_or(l)).collect();
        let entries = parse("fdl.toml", &uncommented.join("\n"), r.path()).unwrap();
        assert_eq!(entries.len(), 3, "{entries:?}");
    }

    #[test]
    fn a_file_written_in_two_parts_is_read_whole() {
        let r = root();
        let file = r.path().join("fdl.toml");
        // The first part is a valid file on its own: before, it was applied and the rest lost.
        let first = "[cgroup.web]\ndeadline_rr = \"1ms\"\n";
        std::fs::write(&file, first).unwrap();
        let writer = {
            let file = file.clone();
            std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(20));
                let mut f = std::fs::OpenOptions::new().append(true).open(&file).unwrap();
                std::io::Write::write_all(&mut f, b"\n[cgroup.batch]\ndeadline_rr = \"5ms\"\n").unwrap();
            })
        };
        let entries = load(&file, r.path()).unwrap();
        writer.join().unwrap();
        assert_eq!(entries.len(), 2, "{entries:?}");

        // A file that has not changed for a while is read at once.
        std::fs::write(&file, first).unwrap();
        let old = SystemTime::now() - Duration::from_secs(10);
        std::fs::File::options().write(true).open(&file).unwrap().set_modified(old).unwrap();
        let start = Instant::now();
        assert_eq!(load(&file, r.path()).unwrap().len(), 1);
        assert!(start.elapsed() < SETTLE, "waited {:?} for a settled file", start.elapsed());
    }

    #[test]
    fn a_file_that_keeps_changing_is_refused() {
        let r = root();
        let file = r.path().join("fdl.toml");
        std::fs::write(&file, "[cgroup.web]\n").unwrap();
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let writer = {
            let (file, stop) = (file.clone(), stop.clone());
            std::thread::spawn(move || {
                let mut f = std::fs::OpenOptions::new().append(true).open(&file).unwrap();
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    std::io::Write::write_all(&mut f, b"# still writing\n").unwrap();
                    std::thread::sleep(Duration::from_millis(2));
                }
            })
        };
        let e = read_settled(&file, Duration::from_millis(100), Duration::from_millis(300)).unwrap_err();
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        writer.join().unwrap();
        assert_eq!(
            e.to_string(),
            format!(
                "{}: still being written after 300 ms (it changed while it was read); nothing was applied: \
                 write the new file elsewhere and rename it into place",
                file.display()
            )
        );
    }

    #[test]
    fn absolute_paths_under_the_mount_are_accepted() {
        let r = root();
        let text = format!("[cgroup.\"{}/web\"]\ndeadline_rr = \"1ms\"\n", r.path().display());
        let entries = parse("fdl.toml", &text, r.path()).unwrap();
        assert_eq!(entries[0].path, r.path().join("web"));
    }

    /// What every accepted configuration satisfies, whatever text it came from.
    fn assert_valid(entries: &[Entry], root: &Path) {
        let mut seen = std::collections::HashSet::new();
        for e in entries {
            let p = e.params;
            let rel = e.path.strip_prefix(root).expect("a path outside the cgroup mount");
            let level = rel.components().count();
            assert!(level >= 1 && seen.insert(&e.path), "{e:?}");
            assert!(p.deadline_rr_ns > 0 || p.guaranteed_shares > 0, "{e:?}: no parameters");
            if p.deadline_rr_ns > 0 {
                assert!((DEADLINE_MIN_NS..=DEADLINE_MAX_NS).contains(&p.deadline_rr_ns), "{e:?}");
                let outer = entries.iter().find(|o| o.params.deadline_rr_ns > 0 && e.path.starts_with(&o.path) && o.path != e.path);
                assert!(outer.is_none(), "{e:?} inside {outer:?}");
            }
            if p.deadline_wakeup_ns > 0 {
                assert!(p.deadline_wakeup_ns >= DEADLINE_MIN_NS && p.deadline_wakeup_ns <= p.deadline_rr_ns, "{e:?}");
            }
            assert!(p.guaranteed_shares <= SHARES_MAX, "{e:?}");
            let parent = e.path.parent().unwrap();
            let guaranteed = |a: &Path| entries.iter().any(|o| o.path == a && o.params.guaranteed_shares > 0);
            if p.guaranteed_shares > 0 && parent != root && !guaranteed(parent) {
                assert!(!e.path.ancestors().skip(1).any(guaranteed), "{e:?}: a guaranteed ancestor, not its parent");
            }
        }
        let g = guarantees_cpus(entries, root);
        assert!(g.values().all(|cpus| cpus.is_finite() && *cpus > 0.0), "{g:?}");
    }

    /// Text made of the pieces a configuration is made of, right and wrong, so that most inputs
    /// get past the TOML parser and reach the checks.
    fn config_text() -> impl Strategy<Value = String> {
        let name = prop_oneof![
            Just("web".to_string()),
            Just("web/api".to_string()),
            Just("/web/".to_string()),
            Just("../etc".to_string()),
            Just("a-file".to_string()),
            Just("plain-dir".to_string()),
            "[a-z]{1,3}(/[a-z.]{0,3}){0,3}",
        ];
        let key = prop_oneof![
            Just("deadline_rr"),
            Just("deadline_wakeup"),
            Just("guaranteed_shares"),
            Just("deadline_r"),
        ];
        let value = prop_oneof![
            "\"[0-9]{1,7}(\\.[0-9])?(ns|us|ms|s|m|h| parsecs|)\"",
            "-?[0-9]{1,8}",
            Just("\"none\"".to_string()),
            Just("true".to_string()),
            "[ -~]{0,6}",
        ];
        let table = (name, proptest::collection::vec((key, value), 0..4)).prop_map(|(name, kv)| {
            let body: String = kv.iter().map(|(k, v)| format!("{k} = {v}\n")).collect();
            format!("[cgroup.\"{name}\"]\n{body}")
        });
        proptest::collection::vec(table, 0..5).prop_map(|t| t.join("\n"))
    }

    fn parse_is_valid_or_located(text: &str) {
        let r = root();
        match parse("fdl.toml", text, r.path()) {
            Ok(entries) => assert_valid(&entries, r.path()),
            Err(e) => {
                let e = e.to_string();
                let line: usize = e
                    .strip_prefix("fdl.toml:")
                    .and_then(|rest| rest.split_once(": "))
                    .and_then(|(n, why)| (!why.is_empty()).then_some(n))
                    .and_then(|n| n.parse().ok())
                    .unwrap_or_else(|| panic!("no file:line in {e:?} for {text:?}"));
                // An error at the end of the text is on the line after its last newline.
                assert!(line >= 1 && line <= text.lines().count() + 1, "line {line} in {e:?} for {text:?}");
            }
        }
    }

    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]

        #[test]
        fn any_text_is_a_valid_configuration_or_an_error_with_its_line(text in "\\PC{0,200}") {
            parse_is_valid_or_located(&text);
        }

        #[test]
        fn configuration_like_text_is_valid_or_an_error_with_its_line(text in config_text()) {
            parse_is_valid_or_located(&text);
        }

        #[test]
        fn any_set_is_a_valid_change_or_an_error_naming_the_cgroup(
            cgroup in prop_oneof![Just("web".to_string()), Just("web/x".to_string()), "[ -~]{0,12}"],
            assign in proptest::collection::vec("(deadline_rr|deadline_wakeup|guaranteed_shares|[a-z]{0,4})(=)?[ -~]{0,8}", 0..4),
        ) {
            let r = root();
            let base = parse("fdl.toml", "[cgroup.web]\ndeadline_rr = \"1ms\"\nguaranteed_shares = 1024\n", r.path()).unwrap();
            match apply_set(&base, r.path(), &cgroup, &assign) {
                Ok(entries) => assert_valid(&entries, r.path()),
                Err(e) => {
                    let e = e.to_string();
                    prop_assert!(e.starts_with("cgroup ") && e.len() > "cgroup x: ".len(), "{e:?}");
                }
            }
        }
    }
}
