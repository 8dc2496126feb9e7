//! Percentiles of latency samples, reported the way schbench reports them.

/// The percentiles printed, in order; the starred one is the headline.
pub const PERCENTILES: [f64; 7] = [50.0, 75.0, 90.0, 95.0, 99.0, 99.5, 99.9];

#[derive(Debug, PartialEq)]
pub struct Summary {
    pub count: usize,
    /// (percentile, value, samples above the previous percentile up to this one)
    pub rows: Vec<(f64, u64, usize)>,
    pub min: u64,
    pub max: u64,
    /// (threshold in microseconds, samples above it), when asked for.
    pub late: Option<(u64, usize)>,
}

/// Nearest rank (1-based) of the p-th percentile among n samples: the smallest rank with at
/// least p % of the samples at or below it.
/// Integer arithmetic on per-mille, so that 99.9 % of 1000 is exactly rank 999.
fn rank(n: usize, p: f64) -> usize {
    let permille = (p * 10.0).round() as usize;
    (permille * n).div_ceil(1000).clamp(1, n)
}

/// Percentiles of `samples` (sorted in place) and, with `late_after`, how many lie above it.
pub fn summarize(samples: &mut [u64], late_after: Option<u64>) -> Option<Summary> {
    if samples.is_empty() {
        return None;
    }
    samples.sort_unstable();
    let mut rows = Vec::new();
    let mut prev_rank = 0;
    for p in PERCENTILES {
        let r = rank(samples.len(), p);
        rows.push((p, samples[r - 1], r - prev_rank));
        prev_rank = r;
    }
    let late = late_after.map(|t| (t, samples.len() - samples.partition_point(|&v| v <= t)));
    Some(Summary { count: samples.len(), rows, min: samples[0], max: *samples.last().unwrap(), late })
}

impl Summary {
    /// The schbench layout: values in microseconds, the 99th percentile starred.
    pub fn table(&self, runtime_secs: u64) -> String {
        let mut out = format!(
            "Latency percentiles (usec) runtime {runtime_secs} (s) ({} total samples)\n",
            self.count
        );
        for (p, v, n) in &self.rows {
            let star = if *p == 99.0 { "*" } else { "" };
            out += &format!("{star}{p:.1}th: {v} ({n} samples)\n");
        }
        out += &format!("min={}, max={}\n", self.min, self.max);
        if let Some((t, n)) = self.late {
            out += &format!("late (above {t} usec): {n} of {}\n", self.count);
        }
        out
    }

    pub fn json(&self, runtime_secs: u64) -> String {
        let pcts: Vec<String> = self.rows.iter().map(|(p, v, _)| format!("\"p{p}\": {v}")).collect();
        let late = match self.late {
            Some((t, n)) => format!(", \"late_after_us\": {t}, \"late\": {n}"),
            None => String::new(),
        };
        format!(
            "{{\"unit\": \"usec\", \"runtime_secs\": {runtime_secs}, \"samples\": {}, {}, \"min\": {}, \"max\": {}{late}}}",
            self.count,
            pcts.join(", "),
            self.min,
            self.max
        )
    }
}

/// One JSON line: the headline summary, with the wake-up delays' summary as its "wake" and the
/// message threads' timer wake-ups as its "timer", where given.
pub fn json_with_wake(s: &Summary, wake: Option<&Summary>, timer: Option<&Summary>, runtime_secs: u64) -> String {
    let mut line = s.json(runtime_secs);
    for (key, x) in [("wake", wake), ("timer", timer)] {
        if let Some(x) = x {
            line.pop(); // its closing brace
            line += &format!(", \"{key}\": {}}}", x.json(runtime_secs));
        }
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_of_known_samples() {
        let mut s: Vec<u64> = (1..=1000).collect();
        let sum = summarize(&mut s, None).unwrap();
        let values: Vec<u64> = sum.rows.iter().map(|r| r.1).collect();
        assert_eq!(values, vec![500, 750, 900, 950, 990, 995, 999]);
        assert_eq!((sum.min, sum.max, sum.count), (1, 1000, 1000));
        let counts: Vec<usize> = sum.rows.iter().map(|r| r.2).collect();
        assert_eq!(counts, vec![500, 250, 150, 50, 40, 5, 4]);
    }

    #[test]
    fn unsorted_input_and_small_counts() {
        let mut s = vec![30, 10, 20];
        let sum = summarize(&mut s, None).unwrap();
        assert_eq!(sum.rows[0].1, 20, "p50 of 3 samples is the 2nd");
        assert_eq!(sum.rows[4].1, 30, "p99 of 3 samples is the max");
        assert_eq!(summarize(&mut [7], None).unwrap().rows[6].1, 7, "p99.9 of one sample is it");
        assert!(summarize(&mut [], None).is_none());
    }

    #[test]
    fn table_and_json_layout() {
        let mut s: Vec<u64> = (1..=100).collect();
        let sum = summarize(&mut s, None).unwrap();
        let t = sum.table(30);
        assert!(t.starts_with("Latency percentiles (usec) runtime 30 (s) (100 total samples)\n"));
        assert!(t.contains("\n*99.0th: 99 (4 samples)\n"), "{t}");
        assert!(t.ends_with("min=1, max=100\n"));
        assert!(sum.json(30).contains("\"p99\": 99"), "{}", sum.json(30));
        assert!(!sum.json(30).contains("late"));
        let late = summarize(&mut s, Some(90)).unwrap();
        assert_eq!(late.late, Some((90, 10)));
        assert_eq!(summarize(&mut s, Some(100)).unwrap().late, Some((100, 0)));
        assert!(late.json(30).ends_with("\"late_after_us\": 90, \"late\": 10}"), "{}", late.json(30));
        assert!(late.table(30).ends_with("late (above 90 usec): 10 of 100\n"));
        // The wake-up delays ride along as "wake", with their own late count.
        let line = json_with_wake(&sum, Some(&late), None, 30);
        assert!(line.starts_with(&sum.json(30)[..sum.json(30).len() - 1]), "{line}");
        assert!(line.ends_with(&format!(", \"wake\": {}}}", late.json(30))), "{line}");
        assert_eq!(json_with_wake(&sum, None, None, 30), sum.json(30));
        // The message threads' timer wake-ups after it, as "timer".
        let both = json_with_wake(&sum, Some(&late), Some(&sum), 30);
        assert!(both.starts_with(&line[..line.len() - 1]), "{both}");
        assert!(both.ends_with(&format!(", \"timer\": {}}}", sum.json(30))), "{both}");
    }
}
