//! Signals as flags that the scheduler's loop polls (signal-hook): SIGINT and SIGTERM stop
//! scx_fdl, SIGHUP reloads --config.

use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use anyhow::{Context, Result};
use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};

/// Sets `shutdown` on SIGINT and SIGTERM and `reload` on SIGHUP, from then on.
pub fn install(shutdown: &Arc<AtomicBool>, reload: &Arc<AtomicBool>) -> Result<()> {
    for (signal, name) in [(SIGINT, "SIGINT"), (SIGTERM, "SIGTERM")] {
        signal_hook::flag::register(signal, shutdown.clone()).with_context(|| format!("installing the {name} handler"))?;
    }
    signal_hook::flag::register(SIGHUP, reload.clone()).context("installing the SIGHUP handler")?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::Ordering;

    #[test]
    fn sighup_asks_for_a_reload_and_sigterm_and_sigint_for_a_stop() {
        let (shutdown, reload) = (Arc::new(AtomicBool::new(false)), Arc::new(AtomicBool::new(false)));
        install(&shutdown, &reload).unwrap();
        signal_hook::low_level::raise(SIGHUP).unwrap();
        assert!(reload.swap(false, Ordering::Relaxed) && !shutdown.load(Ordering::Relaxed));
        for signal in [SIGTERM, SIGINT] {
            signal_hook::low_level::raise(signal).unwrap();
            assert!(shutdown.swap(false, Ordering::Relaxed), "signal {signal} did not ask for a stop");
            assert!(!reload.load(Ordering::Relaxed));
        }
    }
}
