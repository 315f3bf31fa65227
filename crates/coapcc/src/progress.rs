//! A progress bar on stderr for runs longer than a second: a thread reads a shared counter the
//! simulation increments per finished exchange. indicatif hides it when stderr is no terminal.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};

/// A running progress display.
#[derive(Debug)]
pub struct Bar {
    done: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Bar {
    /// Watches `counter` up to `total`, showing a bar once a second has passed.
    pub fn start(total: u64, counter: Arc<AtomicU64>, unit: &'static str) -> Self {
        let done = Arc::new(AtomicBool::new(false));
        let stop = done.clone();
        let thread = std::thread::spawn(move || {
            let wait = crate::wall::Stopwatch::start();
            while wait.seconds() < 1.0 {
                if stop.load(Ordering::Relaxed) {
                    return;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            let bar = ProgressBar::new(total).with_elapsed(Duration::from_secs_f64(wait.seconds()));
            let style = ProgressStyle::with_template(&format!(
                "{{spinner}} [{{elapsed_precise}}] {{bar:40}} {{human_pos}}/{{human_len}} {unit} {{msg}} ETA {{eta}}"
            ))
            .unwrap_or_else(|_| ProgressStyle::default_bar());
            bar.set_style(style);
            while !stop.load(Ordering::Relaxed) {
                let done = counter.load(Ordering::Relaxed);
                bar.set_position(done);
                bar.set_message(format!("({:.0}/s)", done as f64 / wait.seconds().max(1e-9)));
                std::thread::sleep(Duration::from_millis(100));
            }
            bar.finish_and_clear();
        });
        Bar { done, thread: Some(thread) }
    }

    /// Stops and clears the display.
    pub fn finish(mut self) {
        self.done.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}
