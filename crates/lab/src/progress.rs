//! Progress on stderr for runs longer than a second: a thread reads a shared counter the
//! simulation increments per finished exchange. On a terminal, an indicatif bar; otherwise (a
//! batch job's log) one line every [`LOG_EVERY`] so the job shows life.
//!
//! A simulation's display ([`Progress`]) counts finished exchanges (the bottleneck: every
//! exchange ends, so their total is known) or simulated seconds (the mesh: a run's length is
//! fixed, the number of its exchanges is not). It starts only once the run has taken
//! [`SHOW_AFTER`]: the simulation looks at the clock every [`LOOK_EVERY`] exchanges, and the
//! first look past that starts the display's thread. A short run starts no thread at all
//! (starting and stopping one took about 0.2 ms, a tenth of a one-client run's process). A
//! sweep's display counts its cells' work (their exchanges, or simulated seconds, as each
//! replication ends: a 400-client cell weighs what it costs against a 5-client one), and starts
//! with the sweep ([`Bar::start`]).
//!
//! The ETA is ours, not indicatif's: the remaining work at the average rate since the start
//! ([`eta`]), shown only once 1 % of the work is done and 2 s have passed. indicatif's estimator
//! weighs the first ticks heavily and promised "ETA 0s" a second into long runs.

use std::io::IsTerminal;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, OnceLock};
use std::thread::JoinHandle;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};

/// How often a progress line is written when stderr is not a terminal.
pub const LOG_EVERY: Duration = Duration::from_secs(10);

/// How long a run goes before its progress is shown.
pub const SHOW_AFTER: Duration = Duration::from_secs(1);

/// Exchanges between two looks at the clock by a simulation's [`Progress`].
pub const LOOK_EVERY: u64 = 32;

/// Seconds left for `total − done` units at the average rate of `done` in `elapsed_s`; `None`
/// while too little is done (under 1 % or 2 s) for the rate to mean anything.
pub fn eta(done: u64, total: u64, elapsed_s: f64) -> Option<f64> {
    if done == 0 || elapsed_s < 2.0 || done * 100 < total {
        return None;
    }
    Some(total.saturating_sub(done) as f64 * elapsed_s / done as f64)
}

/// `h:mm:ss`.
fn clock(s: f64) -> String {
    let s = s.round() as u64;
    format!("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
}

/// The rate and ETA part of a progress display.
fn status(done: u64, total: u64, elapsed_s: f64) -> String {
    let rate = done as f64 / elapsed_s.max(1e-9);
    let eta = eta(done, total, elapsed_s).map_or("-".into(), clock);
    // a slow count keeps its decimals ("0.25/s", not "0/s")
    let digits = if rate >= 10.0 { 0 } else { 2 };
    format!("({rate:.digits$}/s) ETA {eta}")
}

/// A running progress display.
#[derive(Debug)]
pub struct Bar {
    /// Dropped to stop the display: its thread wakes at once (a run's end is never delayed by
    /// the display's refresh interval).
    done: Option<mpsc::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

/// Waits up to `d` for the stop signal: true once the run is over.
fn stopped(stop: &mpsc::Receiver<()>, d: Duration) -> bool {
    !matches!(stop.recv_timeout(d), Err(RecvTimeoutError::Timeout))
}

impl Bar {
    /// Watches `counter` up to `total`, showing progress once [`SHOW_AFTER`] has passed.
    pub fn start(total: u64, counter: Arc<AtomicU64>, unit: &'static str) -> Self {
        Self::spawn(total, counter, unit, crate::wall::Stopwatch::start(), SHOW_AFTER)
    }

    /// Watches `counter` up to `total` for a run timed by `watch`, showing progress once `delay`
    /// has passed.
    fn spawn(
        total: u64,
        counter: Arc<AtomicU64>,
        unit: &'static str,
        watch: crate::wall::Stopwatch,
        delay: Duration,
    ) -> Self {
        let (done, stop) = mpsc::channel();
        let thread = std::thread::spawn(move || {
            if stopped(&stop, delay) {
                return;
            }
            if std::io::stderr().is_terminal() {
                bar(total, &counter, unit, &stop, &watch);
            } else {
                lines(total, &counter, unit, &stop, &watch);
            }
        });
        Bar { done: Some(done), thread: Some(thread) }
    }

    /// Stops and clears the display.
    pub fn finish(mut self) {
        drop(self.done.take());
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// What a simulation's progress counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Counting {
    /// Finished exchanges.
    Exchanges,
    /// Whole seconds of virtual time, summed over the replications.
    SimulatedSeconds,
}

impl Counting {
    fn unit(self) -> &'static str {
        match self {
            Counting::Exchanges => "exchanges",
            Counting::SimulatedSeconds => "simulated s",
        }
    }
}

/// A run's progress total: the units of `work` a replication holds, times `reps`, and their name
/// (a world that counts only whole replications: one each).
pub(crate) fn units(work: netsim::worlds::Work, reps: u32) -> (u64, &'static str) {
    use netsim::worlds::Work;
    let (per_rep, unit) = match work {
        Work::Exchanges(n) => (n, Counting::Exchanges.unit()),
        Work::SimulatedSeconds(n) => (n, Counting::SimulatedSeconds.unit()),
        Work::Replication => (1, "replications"),
    };
    (per_rep.saturating_mul(u64::from(reps)), unit)
}

/// A simulation's progress: `total` units, counted as exchanges finish (on any thread); the
/// display starts the first time a count finds the run [`SHOW_AFTER`] old.
#[derive(Debug)]
pub struct Progress {
    total: u64,
    counting: Counting,
    done: Arc<AtomicU64>,
    /// Exchanges told, when `done` counts something else.
    exchanges: AtomicU64,
    watch: crate::wall::Stopwatch,
    show_after_s: f64,
    bar: OnceLock<Bar>,
}

impl Progress {
    /// A run of `total` units starts now.
    pub fn start(total: u64, counting: Counting) -> Self {
        Self::showing_after(total, counting, SHOW_AFTER)
    }

    /// A run of `total` units starts now; it counts them, but shows nothing (`--quiet`).
    pub fn hidden(total: u64, counting: Counting) -> Self {
        Self::showing_after(total, counting, Duration::MAX)
    }

    /// A run of `total` units starts now; its progress is shown after `delay`.
    fn showing_after(total: u64, counting: Counting, delay: Duration) -> Self {
        Progress {
            total,
            counting,
            done: Arc::default(),
            exchanges: AtomicU64::new(0),
            watch: crate::wall::Stopwatch::start(),
            show_after_s: delay.as_secs_f64(),
            bar: OnceLock::new(),
        }
    }

    /// Whether the display has started.
    pub fn shown(&self) -> bool {
        self.bar.get().is_some()
    }

    /// The run is over: stops and clears the display, if it started.
    pub fn finish(self) {
        if let Some(bar) = self.bar.into_inner() {
            bar.finish();
        }
    }
}

impl netsim::Progress for Progress {
    fn exchange_done(&self, sim_s: u64) {
        // exchanges told, for the looks at the clock (one atomic addition when counting them)
        let n = match self.counting {
            Counting::Exchanges => self.done.fetch_add(1, Ordering::Relaxed) + 1,
            Counting::SimulatedSeconds => {
                if sim_s > 0 {
                    self.done.fetch_add(sim_s, Ordering::Relaxed);
                }
                self.exchanges.fetch_add(1, Ordering::Relaxed) + 1
            }
        };
        if n % LOOK_EVERY == 0 && !self.shown() && self.watch.seconds() >= self.show_after_s {
            let unit = self.counting.unit();
            self.bar.get_or_init(|| Bar::spawn(self.total, self.done.clone(), unit, self.watch, Duration::ZERO));
        }
    }
}

fn bar(total: u64, counter: &AtomicU64, unit: &str, stop: &mpsc::Receiver<()>, wait: &crate::wall::Stopwatch) {
    let bar = ProgressBar::new(total).with_elapsed(Duration::from_secs_f64(wait.seconds()));
    let style = ProgressStyle::with_template(&format!(
        "{{spinner}} [{{elapsed_precise}}] {{bar:40}} {{human_pos}}/{{human_len}} {unit} {{msg}}"
    ))
    .unwrap_or_else(|_| ProgressStyle::default_bar());
    bar.set_style(style);
    loop {
        let done = counter.load(Ordering::Relaxed);
        bar.set_position(done);
        bar.set_message(status(done, total, wait.seconds()));
        if stopped(stop, Duration::from_millis(100)) {
            break;
        }
    }
    bar.finish_and_clear();
}

fn lines(total: u64, counter: &AtomicU64, unit: &str, stop: &mpsc::Receiver<()>, wait: &crate::wall::Stopwatch) {
    let mut next = 0.0;
    loop {
        let t = wait.seconds();
        if t >= next {
            let done = counter.load(Ordering::Relaxed);
            let pct = 100.0 * done as f64 / total.max(1) as f64;
            eprintln!("coapcc: {done}/{total} {unit} ({pct:.0} %) after {} {}", clock(t), status(done, total, t));
            next = t + LOG_EVERY.as_secs_f64();
        }
        if stopped(stop, Duration::from_millis(100)) {
            break;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn eta_is_the_rest_at_the_average_rate_and_only_once_it_means_something() {
        // 50 of 100 in 10 s: 50 more at 5/s
        assert_eq!(eta(50, 100, 10.0), Some(10.0));
        // 250 of 1,000 in 4 s: 750 at 62.5/s
        assert_eq!(eta(250, 1000, 4.0), Some(12.0));
        assert_eq!(eta(0, 100, 10.0), None);
        assert_eq!(eta(50, 100, 1.0), None, "before 2 s");
        assert_eq!(eta(9, 1000, 30.0), None, "under 1 %");
        assert_eq!(eta(100, 100, 30.0), Some(0.0));
        assert_eq!(clock(3725.4), "1:02:05");
        assert_eq!(status(0, 10, 1.0), "(0.00/s) ETA -");
        // 3 of 24 cells in 12 s had shown "(0/s)": 0.25/s, 21 more in 84 s
        assert_eq!(status(3, 24, 12.0), "(0.25/s) ETA 0:01:24");
        assert_eq!(status(600, 1000, 12.0), "(50/s) ETA 0:00:08");
    }

    #[test]
    fn a_display_starts_at_the_first_look_past_its_delay_and_never_before() {
        use netsim::Progress as _;
        // no delay: the first look (the LOOK_EVERY-th exchange) starts it, not one before
        let p = Progress::showing_after(100, Counting::Exchanges, Duration::ZERO);
        for _ in 1..LOOK_EVERY {
            p.exchange_done(7);
        }
        assert!(!p.shown(), "no look yet");
        p.exchange_done(7);
        assert!(p.shown());
        assert_eq!(p.done.load(Ordering::Relaxed), LOOK_EVERY, "exchanges, whatever the seconds");
        p.finish();
        // a delay no test reaches: looks find it too early, no thread starts
        let p = Progress::showing_after(100, Counting::Exchanges, Duration::from_secs(3600));
        for _ in 0..10 * LOOK_EVERY {
            p.exchange_done(0);
        }
        assert!(!p.shown());
        p.finish();
    }

    #[test]
    fn simulated_seconds_add_up_what_the_replications_tell() {
        use netsim::Progress as _;
        let p = Progress::showing_after(100, Counting::SimulatedSeconds, Duration::from_secs(3600));
        // two replications' exchanges, interleaved: 0 + 2 + 0 + 3 seconds, then 1 + 4
        for s in [0, 2, 0, 3, 1, 4] {
            p.exchange_done(s);
        }
        assert_eq!(p.done.load(Ordering::Relaxed), 10);
        p.finish();
    }
}
