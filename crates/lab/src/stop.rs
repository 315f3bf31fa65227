//! Stopping a long run early, keeping what finished: a flag that `sim` checks before each
//! replication and `sweep` before each cell and each replication of a cell. The command line sets
//! it on Ctrl-C ([`Stop::on_ctrl_c`], with the `ctrlc` crate: a portable handler that runs on a
//! thread of its own, where printing is safe); the Python package sets it when the interpreter
//! reports a KeyboardInterrupt. A replication running when the flag is set runs to its end (the
//! engine is not polled inside a replication: its hot loop stays free of the check).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};

/// A shared stop flag; cloning shares it.
#[derive(Debug, Clone, Default)]
pub struct Stop(Arc<Flags>);

#[derive(Debug, Default)]
struct Flags {
    stop: AtomicBool,
    abandon: AtomicBool,
}

impl Stop {
    /// Asks the run to stop: no replication or cell starts after this.
    pub fn set(&self) {
        self.0.stop.store(true, Ordering::SeqCst);
    }

    /// Whether the run was asked to stop.
    pub fn is_set(&self) -> bool {
        self.0.stop.load(Ordering::SeqCst)
    }

    /// Stops the run and disowns what finishes from now on: its results are known to be wrong
    /// (a controller written in Python failed, and the others gave their exchanges up so that
    /// the run ends quickly). A sweep then stores no further cell, and a simulation writes no
    /// files.
    pub fn abandon(&self) {
        self.0.abandon.store(true, Ordering::SeqCst);
        self.set();
    }

    /// Whether the run was abandoned ([`Stop::abandon`]).
    pub fn is_abandoned(&self) -> bool {
        self.0.abandon.load(Ordering::SeqCst)
    }

    /// The process's Ctrl-C flag: the first SIGINT sets it and says what happens; a second ends
    /// the process at once (exit status 130, the shell's for SIGINT).
    pub fn on_ctrl_c() -> Stop {
        static FLAG: OnceLock<Stop> = OnceLock::new();
        FLAG.get_or_init(|| {
            let stop = Stop::default();
            let flag = stop.clone();
            // if no handler can be installed, Ctrl-C keeps its default: the process ends
            let _ = ctrlc::set_handler(move || {
                if flag.is_set() {
                    eprintln!("\ncoapcc: interrupted twice: quitting now");
                    std::process::exit(130);
                }
                flag.set();
                eprintln!(
                    "\ncoapcc: interrupted: finishing the replications running now and keeping what finished \
                     (Ctrl-C again to quit at once)"
                );
            });
            stop
        })
        .clone()
    }
}
