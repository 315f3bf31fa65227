//! The open side of the crate: what an algorithm provides to be configured by name and built
//! per destination ([`ControllerFactory`]), after quinn-proto's `ControllerFactory` and
//! s2n-quic's congestion-controller endpoint.
//!
//! An algorithm is a [`Controller`] (the per-destination state machine) plus a configuration
//! that implements [`ControllerFactory`]: its parameters ([`Params`], usually declared with
//! [`crate::params::params!`]), their validation, and `build`. Registered in the
//! [`crate::registry`] with a name, a source and a one-line summary, it is reachable from every
//! `name:key=value,...` text (the CLI, scenario files, sweeps, Python). The built-in algorithms
//! are registered the same way; `examples/custom-algorithm` in the repository writes one from
//! outside this crate.
//!
//! The clone helper is written here rather than taken from the `dyn-clone` crate: one method,
//! and this crate stays free of dependencies beyond `rand_core` and `libm`.

use alloc::boxed::Box;
use core::fmt;

use crate::params::Params;
use crate::Controller;

/// A broken rule of a configuration: the offending key and the rule, e.g.
/// `("nstart", "must be >= 1")`.
pub type Violation = (&'static str, &'static str);

/// A configured algorithm: its parameters, their validation, and the factory of its
/// per-destination controllers. Implementations are plain data (`Clone`, `Send`, `Sync`): one
/// configuration builds the controllers of every destination, on any thread.
pub trait ControllerFactory: Params + FactoryClone + fmt::Debug + Send + Sync {
    /// Checks the whole configuration; called after every parameter is set.
    fn validate(&self) -> Result<(), Violation> {
        Ok(())
    }

    /// A controller for one destination, with no history. `name` is the registered name it
    /// reports from [`Controller::name`] (one configuration type may serve several names).
    fn build(&self, name: &'static str) -> Box<dyn Controller>;

    /// MAX_RETRANSMIT (RFC 7252 §4.2): the retransmissions an exchange gets before it fails, as
    /// a value for the endpoint (Erbium's endpoint gives up at the last send rather than after
    /// its timer: `coap_endpoint::GiveUp::AtLastSend`). `None` for an algorithm with no fixed limit;
    /// every built-in has one.
    fn max_retransmit(&self) -> Option<u32> {
        None
    }
}

/// Cloning a boxed [`ControllerFactory`]; implemented for every `Clone` factory.
pub trait FactoryClone {
    /// A boxed copy.
    fn clone_factory(&self) -> Box<dyn ControllerFactory>;
}

impl<T: ControllerFactory + Clone + 'static> FactoryClone for T {
    fn clone_factory(&self) -> Box<dyn ControllerFactory> {
        Box::new(self.clone())
    }
}

impl Clone for Box<dyn ControllerFactory> {
    fn clone(&self) -> Self {
        self.clone_factory()
    }
}
