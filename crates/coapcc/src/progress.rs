//! Progress on stderr for runs longer than a second: a thread reads a shared counter the
//! simulation increments per finished exchange. On a terminal, an indicatif bar; otherwise (a
//! batch job's log) one line every [`LOG_EVERY`] so the job shows life.
//!
//! The ETA is ours, not indicatif's: the remaining work at the average rate since the start
//! ([`eta`]), shown only once 1 % of the work is done and 2 s have passed. indicatif's estimator
//! weighs the first ticks heavily and promised "ETA 0s" a second into long runs.

use std::io::IsTerminal;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};

/// How often a progress line is written when stderr is not a terminal.
pub const LOG_EVERY: Duration = Duration::from_secs(10);

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
    format!("({rate:.0}/s) ETA {eta}")
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
    /// Watches `counter` up to `total`, showing progress once a second has passed.
    pub fn start(total: u64, counter: Arc<AtomicU64>, unit: &'static str) -> Self {
        let (done, stop) = mpsc::channel();
        let thread = std::thread::spawn(move || {
            let wait = crate::wall::Stopwatch::start();
            if stopped(&stop, Duration::from_secs(1)) {
                return;
            }
            if std::io::stderr().is_terminal() {
                bar(total, &counter, unit, &stop, &wait);
            } else {
                lines(total, &counter, unit, &stop, &wait);
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
        assert_eq!(status(0, 10, 1.0), "(0/s) ETA -");
    }
}
