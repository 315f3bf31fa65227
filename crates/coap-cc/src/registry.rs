//! The registry: an algorithm's name plus `key=value` parameters → a [`CcConfig`], the factory
//! of per-destination controllers. Text form: `name[:key=value,key=value...]`, e.g.
//! `fasor:max_retransmit=20` or `cocoa:aging=false,nstart=4`.
//!
//! Every algorithm is an [`Algorithm`]: a name, a source, a summary and a constructor of its
//! default configuration (a [`ControllerFactory`]). The built-ins are the table [`ALGORITHMS`];
//! with the `std` feature a program adds its own with [`register`], after which its name works
//! wherever a built-in's does.

use alloc::boxed::Box;
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use core::fmt;

use crate::algorithms::basic_rto::{BasicParams, BasicRto};
use crate::algorithms::cocoa::{Blind, Cocoa, CocoaConfig, CocoaParams, Family};
use crate::algorithms::cocoa_pp::PpParams;
use crate::algorithms::default_coap::{DefaultCoap, DefaultConfig, DefaultParams};
use crate::algorithms::eifel::{Eifel, EifelParams};
use crate::algorithms::fasor::{Fasor, FasorConfig, FasorParams, FasorVariant, FirstRttvar};
use crate::algorithms::full_backoff::Carry;
use crate::algorithms::gsrtc::GsrtcParams;
use crate::algorithms::hedge::{Hedge, HedgeParams};
use crate::algorithms::linux_rto::{LinuxParams, LinuxRto};
use crate::algorithms::peakhopper::{PeakHopper, PeakHopperParams};
use crate::algorithms::rtt_coap::{RttCoap, RttCoapParams};
use crate::factory::{ControllerFactory, Violation};
use crate::marking::MarkingKind;
use crate::params::{ParamInfo, SetError};
use crate::Controller;

/// A registered algorithm.
#[derive(Debug, Clone, Copy)]
pub struct Algorithm {
    /// The CLI / scenario name: lower-case letters, digits and `_`.
    pub name: &'static str,
    /// Where it comes from.
    pub source: &'static str,
    /// One line on what it does.
    pub summary: &'static str,
    /// Its default configuration; called with the name it is registered under (one
    /// constructor may serve several names, as [`ControllerFactory::build`] may).
    pub make: fn(&'static str) -> Box<dyn ControllerFactory>,
    /// The parameters whose values make this algorithm what it is (`default_b`'s
    /// `ack_timeout` = 1 s): a scenario's `cc_defaults` never set them, only its own `cc` can.
    pub defines: &'static [&'static str],
}

/// Every registered algorithm, in a fixed order: DefaultCoAP and its variants first, then the
/// literature roughly by date (the order `coapcc algorithms` lists them in).
pub static ALGORITHMS: &[Algorithm] = &[
    alg(
        "default",
        "RFC 7252 §4.2, §4.8",
        "initial RTO U[2,3] s, binary exponential backoff, no RTT estimation",
        |_| dflt(DefaultParams::default(), Carry::None),
    ),
    alg("default_b", "Betzler et al. (CoAP_B); RFC 7252", "DefaultCoAP with ACK_TIMEOUT = 1 s", |_| {
        dflt(DefaultParams { ack_timeout: 1.0, ..DefaultParams::default() }, Carry::None)
    })
    .defining(&["ack_timeout"]),
    alg(
        "default_fb1",
        "Järvinen et al., ANRW 2018 (Full Backoff)",
        "DefaultCoAP; the backed-off RTO carries into the next exchange",
        |_| dflt(DefaultParams::default(), Carry::Fb1),
    ),
    alg(
        "default_fb2",
        "Järvinen et al., ANRW 2018 (Full Backoff)",
        "as default_fb1, halving the carried RTO after each clean exchange",
        |_| dflt(DefaultParams::default(), Carry::Fb2),
    ),
    alg(
        "cocoa",
        "draft-ietf-core-cocoa-03; Betzler et al. (CoCoA+)",
        "strong/weak RFC 6298 estimators, variable backoff factor",
        |_| cocoa(CocoaParams::default(), Family::COCOA),
    ),
    alg(
        "cocoa4",
        "Betzler et al. 2014/2016; draft-ietf-core-cocoa-03",
        "CoCoA with NSTART = 4 and the exponential blind RTO",
        |_| cocoa(CocoaParams { nstart: 4, blind: Blind::Exp, ..CocoaParams::default() }, Family::COCOA),
    )
    .defining(&["nstart", "blind"]),
    alg(
        "cocoa_strong",
        "Californium CocoaStrong (Betzler et al.)",
        "CoCoA without the weak estimator: retransmitted exchanges give no sample",
        |_| cocoa(CocoaParams { weak_max_retransmissions: 0, ..CocoaParams::default() }, Family::COCOA),
    )
    .defining(&["weak_max_retransmissions"]),
    alg(
        "cocoa_fb1",
        "Järvinen et al., ANRW 2018 (Full Backoff)",
        "CoCoA; the backed-off RTO carries into the next exchange",
        |_| cocoa(CocoaParams::default(), Family::FB1),
    ),
    alg(
        "cocoa_fb2",
        "Järvinen et al., ANRW 2018 (Full Backoff)",
        "CoCoA; max(RTO, weak estimate) backed off carries into the next exchange",
        |_| cocoa(CocoaParams::default(), Family::FB2),
    ),
    alg(
        "linux_rto",
        "Linux tcp_rtt_estimator; Californium LinuxRto",
        "Linux TCP's RTO estimator (mdev/mdev_max), Karn's rule",
        |_| Box::new(LinuxParams::default()),
    ),
    alg(
        "fasor",
        "draft-ietf-core-fasor-02; Järvinen et al., GLOBECOM 2018",
        "Fast-Slow RTO: fast RFC 6298 series, slowrto after ambiguous ACKs",
        |_| fasor(FasorParams::default(), FasorVariant::Fasor),
    ),
    alg(
        "fasor_slow",
        "Järvinen (Helsinki thesis 2019), development variant",
        "RFC 6298; slowrto, doubling, after retransmissions",
        |_| fasor(FasorParams::default(), FasorVariant::Slow),
    ),
    alg(
        "fasor_fastslow",
        "Järvinen (Helsinki thesis 2019), development variant",
        "after retransmissions: fast probe, then slowrto doubling",
        |_| fasor(FasorParams::default(), FasorVariant::FastSlow),
    ),
    alg(
        "fasor_k4",
        "draft-ietf-core-fasor-02 without the first-sample tuning",
        "FASOR with plain RFC 6298 initialisation (first RTO 3R)",
        |_| fasor(FasorParams { first_rttvar: FirstRttvar::Rfc6298, ..FasorParams::default() }, FasorVariant::Fasor),
    )
    .defining(&["first_rttvar"]),
    alg(
        "fasor_token",
        "Järvinen et al.; accurate RTT via the token",
        "FASOR; transmission number in the token, every sample unambiguous",
        |_| fasor(FasorParams { rtt_marking: MarkingKind::Token, ..FasorParams::default() }, FasorVariant::Fasor),
    )
    .defining(&["rtt_marking"]),
    alg(
        "fasor_option",
        "draft-ietf-core-fasor-02 §4.4 (Retransmission Count option)",
        "FASOR; transmission number in option 65028, probe and fallback",
        |_| fasor(FasorParams { rtt_marking: MarkingKind::Option, ..FasorParams::default() }, FasorVariant::Fasor),
    )
    .defining(&["rtt_marking"]),
    alg(
        "rtt_coap",
        "Ancillotti & Bruno, WWIC 2018 (constants chosen, not from the paper)",
        "rate-based pacing from short/long-term RTT, accurate samples",
        |_| Box::new(RttCoapParams::default()),
    ),
    alg(
        "gst",
        "Rathod & Tahiliani 2020 (GST-CoAP)",
        "default_fb2 with geometric halving (1/2)^count of the carried RTO",
        |_| dflt(DefaultParams::default(), Carry::Gst),
    ),
    alg(
        "eifel",
        "Ludwig & Sklower, CCR 2000 (Eifel timer), adapted to CoAP",
        "Eifel gains 1/3 and 1/9, Karn sampling and carry-over",
        |_| Box::new(EifelParams::default()),
    ),
    alg(
        "gsrtc",
        "Rathod & Tahiliani 2021 (GSRTC)",
        "cocoa_fb2 with a geometric-series weight of strong samples",
        |_| cocoa(CocoaParams::default(), Family::gsrtc(GsrtcParams::default())),
    ),
    alg(
        "cocoa_pp",
        "Rathod et al. 2019 (CoCoA++), constants per source code, unverified",
        "CoCoA with a probabilistic backoff factor from CDG delay gradients",
        |_| cocoa(CocoaParams::default(), Family::pp(PpParams::default())),
    ),
    alg(
        "peakhopper",
        "Šimůnek et al. (PH-RTO); Californium PeakhopperRto",
        "peak-hopping RTO over unambiguous samples",
        |_| Box::new(PeakHopperParams::default()),
    ),
    alg(
        "basic_rto",
        "Californium BasicRto (Betzler et al.'s baseline)",
        "one RFC 6298 estimator fed with every sample, retransmitted exchanges' too",
        |_| Box::new(BasicParams::default()),
    ),
    alg(
        "hedge",
        "coapcc, designed with the league (docs/algorithms.md)",
        "accurate samples, RFC 6298 without floor, a bounded backoff carried after non-random losses",
        |_| Box::new(HedgeParams::default()),
    ),
];

const fn alg(
    name: &'static str,
    source: &'static str,
    summary: &'static str,
    make: fn(&'static str) -> Box<dyn ControllerFactory>,
) -> Algorithm {
    Algorithm { name, source, summary, make, defines: &[] }
}

impl Algorithm {
    /// Whether parameter `key` is one that makes this algorithm what it is.
    pub fn is_defined_by(&self, key: &str) -> bool {
        self.defines.contains(&key)
    }

    /// The same, with `keys` as its defining parameters ([`Algorithm::defines`]).
    pub const fn defining(self, keys: &'static [&'static str]) -> Algorithm {
        Algorithm { defines: keys, ..self }
    }
}
fn dflt(params: DefaultParams, carry: Carry) -> Box<dyn ControllerFactory> {
    Box::new(DefaultConfig { params, carry })
}
fn cocoa(params: CocoaParams, family: Family) -> Box<dyn ControllerFactory> {
    Box::new(CocoaConfig { params, family })
}
fn fasor(params: FasorParams, variant: FasorVariant) -> Box<dyn ControllerFactory> {
    Box::new(FasorConfig { params, variant })
}

/// The built-ins' factories: each configuration builds its controller, validates with its own
/// rules and tells its MAX_RETRANSMIT (the field named last).
macro_rules! factory {
    ($ty:ty, |$cfg:ident, $name:ident| $build:expr, $($limit:ident).+) => {
        impl ControllerFactory for $ty {
            fn validate(&self) -> Result<(), Violation> {
                <$ty>::validate(self)
            }
            fn build(&self, $name: &'static str) -> Box<dyn Controller> {
                let $cfg = self;
                Box::new($build)
            }
            fn max_retransmit(&self) -> Option<u32> {
                Some(self.$($limit).+)
            }
        }
    };
}
factory!(DefaultConfig, |c, name| DefaultCoap::new(name, c.params.clone(), c.carry), params.max_retransmit);
factory!(CocoaConfig, |c, name| Cocoa::new(name, c.params.clone(), c.family.clone()), params.max_retransmit);
factory!(FasorConfig, |c, name| Fasor::new(name, c.params.clone(), c.variant), params.max_retransmit);
factory!(LinuxParams, |p, _name| LinuxRto::new(p.clone()), max_retransmit);
factory!(RttCoapParams, |p, _name| RttCoap::new(p.clone()), max_retransmit);
factory!(EifelParams, |p, _name| Eifel::new(p.clone()), max_retransmit);
factory!(PeakHopperParams, |p, _name| PeakHopper::new(p.clone()), max_retransmit);
factory!(BasicParams, |p, _name| BasicRto::new(p.clone()), max_retransmit);
factory!(HedgeParams, |p, _name| Hedge::new(p.clone()), max_retransmit);

/// A configured algorithm: the factory of its per-destination controllers.
#[derive(Debug, Clone)]
pub struct CcConfig {
    algorithm: &'static Algorithm,
    factory: Box<dyn ControllerFactory>,
}

/// Why a `name[:key=value,...]` text was refused. Each message lists what is valid.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SpecError {
    /// No algorithm has that name.
    UnknownAlgorithm(String),
    /// The algorithm has no such parameter.
    UnknownParameter {
        /// The algorithm.
        algorithm: &'static str,
        /// The key given.
        key: String,
        /// Its valid keys.
        valid: Vec<&'static str>,
    },
    /// The value does not parse.
    BadValue {
        /// The algorithm.
        algorithm: &'static str,
        /// The key.
        key: String,
        /// The value given.
        value: String,
        /// What was expected.
        expected: &'static str,
    },
    /// The values parse but are impossible together or out of range.
    Invalid {
        /// The algorithm.
        algorithm: &'static str,
        /// The offending key.
        key: &'static str,
        /// The rule it breaks.
        rule: &'static str,
    },
    /// A parameter is not of the form key=value.
    Syntax(String),
    /// `name:` with no key=value after the colon.
    NoParameters(String),
    /// A key given twice.
    DuplicateKey(String),
}

impl fmt::Display for SpecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SpecError::UnknownAlgorithm(name) => {
                write!(f, "unknown algorithm '{name}'; valid algorithms: ")?;
                join(f, algorithms().iter().map(|a| a.name))
            }
            SpecError::UnknownParameter { algorithm, key, valid } => {
                write!(f, "{algorithm} has no parameter '{key}'; valid parameters: ")?;
                join(f, valid.iter().copied())
            }
            SpecError::BadValue { algorithm, key, value, expected } => {
                write!(f, "{algorithm}: bad value '{value}' for {key}: expected {expected}")
            }
            SpecError::Invalid { algorithm, key, rule } => write!(f, "{algorithm}: {key} {rule}"),
            SpecError::Syntax(text) => write!(f, "'{text}' is not of the form key=value"),
            SpecError::NoParameters(name) => {
                write!(f, "'{name}:' has nothing after the colon: write '{name}' or '{name}:key=value,...'")
            }
            SpecError::DuplicateKey(key) => write!(f, "'{key}' is given twice"),
        }
    }
}

impl core::error::Error for SpecError {}

fn join<'a>(f: &mut fmt::Formatter<'_>, items: impl Iterator<Item = &'a str>) -> fmt::Result {
    for (i, s) in items.enumerate() {
        if i > 0 {
            f.write_str(", ")?;
        }
        f.write_str(s)?;
    }
    Ok(())
}

/// Looks an algorithm up by name.
pub fn algorithm(name: &str) -> Option<&'static Algorithm> {
    ALGORITHMS.iter().find(|a| a.name == name).or_else(|| registered::find(name))
}

/// Every algorithm: the built-ins, in [`ALGORITHMS`]' order, then those [`register`]ed, in the
/// order they were.
pub fn algorithms() -> Vec<&'static Algorithm> {
    let mut all: Vec<&'static Algorithm> = ALGORITHMS.iter().collect();
    all.extend(registered::all());
    all
}

/// Why [`register`] refused an algorithm.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RegisterError {
    /// The name is taken (by a built-in or an earlier registration).
    Taken(&'static str),
    /// The name is empty, or holds something other than lower-case letters, digits and `_`, or
    /// is `tcp` (reserved for CoAP over TCP, RFC 8323).
    BadName(&'static str),
    /// The default configuration breaks its own rules.
    Invalid {
        /// The algorithm.
        algorithm: &'static str,
        /// The offending key.
        key: &'static str,
        /// The rule it breaks.
        rule: &'static str,
    },
}

impl fmt::Display for RegisterError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RegisterError::Taken(name) => write!(f, "an algorithm named '{name}' is already registered"),
            RegisterError::BadName(name) => write!(
                f,
                "'{name}' cannot name an algorithm: use lower-case letters, digits and '_' ('tcp' is reserved)"
            ),
            RegisterError::Invalid { algorithm, key, rule } => {
                write!(f, "{algorithm}: its default configuration breaks a rule: {key} {rule}")
            }
        }
    }
}

impl core::error::Error for RegisterError {}

/// Adds an algorithm to the registry for the rest of the process: from then on its name works
/// wherever a built-in's does (`CcConfig::parse`, scenario files, the simulator, the real
/// client). Refuses a name already taken or not of lower-case letters, digits and `_`, and a
/// default configuration its own `validate` rejects. Registering is cheap and bounded by what
/// the program registers (each entry lives until the process ends).
#[cfg(feature = "std")]
pub fn register(algorithm: Algorithm) -> Result<&'static Algorithm, RegisterError> {
    let name = algorithm.name;
    let well_formed = !name.is_empty()
        && name.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
        && name != "tcp";
    if !well_formed {
        return Err(RegisterError::BadName(name));
    }
    (algorithm.make)(algorithm.name).validate().map_err(|(key, rule)| RegisterError::Invalid {
        algorithm: name,
        key,
        rule,
    })?;
    registered::add(algorithm)
}

/// The algorithms added at run time (`std` only: the table needs a lock).
#[cfg(feature = "std")]
mod registered {
    use super::{Algorithm, RegisterError, ALGORITHMS};
    use alloc::boxed::Box;
    use alloc::vec::Vec;
    use std::sync::RwLock;

    static TABLE: RwLock<Vec<&'static Algorithm>> = RwLock::new(Vec::new());

    fn table() -> std::sync::RwLockReadGuard<'static, Vec<&'static Algorithm>> {
        TABLE.read().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    pub(super) fn find(name: &str) -> Option<&'static Algorithm> {
        table().iter().copied().find(|a| a.name == name)
    }

    pub(super) fn all() -> Vec<&'static Algorithm> {
        table().clone()
    }

    pub(super) fn add(algorithm: Algorithm) -> Result<&'static Algorithm, RegisterError> {
        let mut table = TABLE.write().unwrap_or_else(|poisoned| poisoned.into_inner());
        let name = algorithm.name;
        if ALGORITHMS.iter().any(|a| a.name == name) || table.iter().any(|a| a.name == name) {
            return Err(RegisterError::Taken(name));
        }
        let entry: &'static Algorithm = Box::leak(Box::new(algorithm));
        table.push(entry);
        Ok(entry)
    }
}

/// Without `std` only the built-ins exist.
#[cfg(not(feature = "std"))]
mod registered {
    use super::Algorithm;
    use alloc::vec::Vec;

    pub(super) fn find(_name: &str) -> Option<&'static Algorithm> {
        None
    }

    pub(super) fn all() -> Vec<&'static Algorithm> {
        Vec::new()
    }
}

/// Two configurations are equal when they name the same algorithm with the same parameter
/// values.
impl PartialEq for CcConfig {
    fn eq(&self, other: &Self) -> bool {
        self.name() == other.name() && values(&*self.factory) == values(&*other.factory)
    }
}

/// Every parameter's key and value, as text.
fn values(factory: &dyn ControllerFactory) -> Vec<(&'static str, String)> {
    let mut v = Vec::new();
    factory.describe(&mut |p| v.push((p.name, p.value.to_string())));
    v
}

/// An algorithm's name and its `key=value` pairs, as written.
pub type SpecParts<'a> = (&'a str, Vec<(&'a str, &'a str)>);

/// Splits `name[:key=value,...]` into the name and its pairs, trimmed. Refuses a colon with
/// nothing after it, an empty item (`a=1,,b=2`), an item without `=`, and a key given twice:
/// each is a typo that would otherwise run something the user did not ask for.
pub fn split_spec(text: &str) -> Result<SpecParts<'_>, SpecError> {
    let Some((name, params)) = text.split_once(':') else { return Ok((text.trim(), Vec::new())) };
    let name = name.trim();
    if params.trim().is_empty() {
        return Err(SpecError::NoParameters(name.to_string()));
    }
    let mut pairs: Vec<(&str, &str)> = Vec::new();
    for kv in params.split(',').map(str::trim) {
        let (k, v) = kv.split_once('=').ok_or_else(|| SpecError::Syntax(kv.to_string()))?;
        let (k, v) = (k.trim(), v.trim());
        if k.is_empty() {
            return Err(SpecError::Syntax(kv.to_string()));
        }
        if pairs.iter().any(|(seen, _)| *seen == k) {
            return Err(SpecError::DuplicateKey(k.to_string()));
        }
        pairs.push((k, v));
    }
    Ok((name, pairs))
}

impl CcConfig {
    /// The algorithm's defaults.
    pub fn new(name: &str) -> Result<Self, SpecError> {
        let algorithm = algorithm(name).ok_or_else(|| SpecError::UnknownAlgorithm(name.to_string()))?;
        Ok(CcConfig { algorithm, factory: (algorithm.make)(algorithm.name) })
    }

    /// A configuration from a factory built by the caller (a configuration object carrying more
    /// than its parameters, such as the stand-in of [`crate::testing`]), checked by its own
    /// rules. `algorithm` names it and gives the defaults `Display` compares against.
    pub fn from_factory(algorithm: &'static Algorithm, factory: Box<dyn ControllerFactory>) -> Result<Self, SpecError> {
        let cfg = CcConfig { algorithm, factory };
        cfg.validate()?;
        Ok(cfg)
    }

    /// Parses `name[:key=value,...]` (see [`split_spec`] for what is refused).
    pub fn parse(text: &str) -> Result<Self, SpecError> {
        let (name, pairs) = split_spec(text)?;
        let mut cfg = CcConfig::new(name)?;
        for (k, v) in pairs {
            cfg.set(k, v)?;
        }
        Ok(cfg)
    }

    /// The registered algorithm.
    pub fn algorithm(&self) -> &'static Algorithm {
        self.algorithm
    }

    /// The algorithm's name.
    pub fn name(&self) -> &'static str {
        self.algorithm.name
    }

    /// The configuration itself.
    pub fn factory(&self) -> &dyn ControllerFactory {
        &*self.factory
    }

    /// Sets one parameter, then checks the whole configuration.
    pub fn set(&mut self, key: &str, value: &str) -> Result<(), SpecError> {
        let algorithm = self.name();
        match self.factory.set(key, value) {
            Ok(()) => self.validate(),
            Err(SetError::Unknown) => {
                Err(SpecError::UnknownParameter { algorithm, key: key.to_string(), valid: self.keys() })
            }
            Err(SetError::BadValue { expected }) => {
                Err(SpecError::BadValue { algorithm, key: key.to_string(), value: value.to_string(), expected })
            }
        }
    }

    /// MAX_RETRANSMIT, when the algorithm has a fixed limit ([`ControllerFactory::max_retransmit`]).
    pub fn max_retransmit(&self) -> Option<u32> {
        self.factory.max_retransmit()
    }

    /// A parameter's current value, as `set` would take it.
    pub fn get(&self, key: &str) -> Option<String> {
        let mut v = None;
        self.describe(&mut |p| {
            if p.name == key {
                v = Some(p.value.to_string());
            }
        });
        v
    }

    /// Does the algorithm have this parameter?
    pub fn has_param(&self, key: &str) -> bool {
        self.keys().contains(&key)
    }

    fn keys(&self) -> Vec<&'static str> {
        let mut keys = Vec::new();
        self.describe(&mut |p| keys.push(p.name));
        keys
    }

    /// Calls `f` with every parameter and its current value.
    pub fn describe(&self, f: &mut dyn FnMut(ParamInfo<'_>)) {
        self.factory.describe(f)
    }

    fn validate(&self) -> Result<(), SpecError> {
        self.factory.validate().map_err(|(key, rule)| SpecError::Invalid { algorithm: self.name(), key, rule })
    }

    /// A controller for one destination, with no history.
    pub fn build(&self) -> Box<dyn Controller> {
        self.factory.build(self.name())
    }
}

impl CcConfig {
    /// `name:key=value,...` with every parameter that differs from the algorithm's defaults or
    /// from `base` (the same algorithm with other values beneath: a scenario's `cc_defaults`),
    /// so that the text set over `base` gives this configuration again.
    pub fn spec_over(&self, base: &CcConfig) -> String {
        self.spec(Some(base))
    }

    fn spec(&self, base: Option<&CcConfig>) -> String {
        use fmt::Write;
        let defaults = values(&*(self.algorithm.make)(self.algorithm.name));
        let beneath = base.map(|b| values(b.factory())).unwrap_or_default();
        let mut out = String::from(self.name());
        let mut sep = ':';
        let mut i = 0;
        self.describe(&mut |p| {
            let v = p.value.to_string();
            let differs = |vs: &[(&str, String)]| vs.get(i).map(|d| &d.1) != Some(&v);
            if differs(&defaults) || (base.is_some() && differs(&beneath)) {
                let _ = write!(out, "{sep}{}={v}", p.name);
                sep = ',';
            }
            i += 1;
        });
        out
    }
}

/// `name:key=value,...` with every parameter that differs from the algorithm's defaults.
impl fmt::Display for CcConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.spec(None))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A variant's defining parameters are those whose default differs from its base's (the
    /// name before its last `_`, when that is an algorithm with the same parameters): declared,
    /// all of them, and nothing else.
    #[test]
    fn a_variant_declares_exactly_the_parameters_it_changes() {
        let defaults = |name: &str| -> Vec<(&'static str, Option<String>)> {
            let cfg = CcConfig::new(name).unwrap();
            cfg.keys().into_iter().map(|k| (k, cfg.get(k))).collect()
        };
        let mut checked = 0;
        for a in ALGORITHMS {
            let Some((base, _)) = a.name.rsplit_once('_') else { continue };
            if algorithm(base).is_none() {
                continue;
            }
            let (mine, theirs) = (defaults(a.name), defaults(base));
            if mine.iter().map(|p| p.0).ne(theirs.iter().map(|p| p.0)) {
                continue; // another parameter set (cocoa_pp): no variant of its base's values
            }
            let mut changed: Vec<&str> =
                mine.iter().zip(&theirs).filter(|(m, t)| m.1 != t.1).map(|(m, _)| m.0).collect();
            let mut declared = a.defines.to_vec();
            declared.sort_unstable();
            changed.sort_unstable();
            assert_eq!(declared, changed, "{}", a.name);
            checked += 1;
        }
        // default_b (ACK_TIMEOUT 1 s against 2 s), cocoa4 (NSTART 4 and the exponential blind
        // RTO), cocoa_strong (no weak estimator), fasor_k4, fasor_token and fasor_option, and
        // the carrying variants, which change no parameter
        assert!(checked >= 8, "{checked}");
        assert_eq!(algorithm("default_b").unwrap().defines, ["ack_timeout"]);
        assert_eq!(algorithm("default").unwrap().defines, [] as [&str; 0]);
    }

    #[test]
    fn every_algorithm_builds_with_its_name() {
        for a in ALGORITHMS {
            let c = CcConfig::new(a.name).unwrap();
            assert_eq!(c.build().name(), a.name);
            assert!(c.has_param("max_retransmit") && c.has_param("nstart"), "{}", a.name);
        }
        assert_eq!(ALGORITHMS.len(), 24);
    }

    /// The endpoint reads MAX_RETRANSMIT as a value: every built-in tells the one it was given.
    #[test]
    fn every_algorithm_tells_its_max_retransmit() {
        for a in ALGORITHMS {
            assert_eq!(CcConfig::new(a.name).unwrap().max_retransmit(), Some(4), "{}", a.name);
            let seven = CcConfig::parse(&alloc::format!("{}:max_retransmit=7", a.name)).unwrap();
            assert_eq!(seven.max_retransmit(), Some(7), "{}", a.name);
        }
    }

    /// An algorithm added at run time is reachable by name, lists after the built-ins, and
    /// prints and compares like one; names taken, malformed or reserved are refused.
    #[cfg(feature = "std")]
    #[test]
    fn registered_algorithms_work_by_name() {
        use crate::testing::StandIn;
        let entry = Algorithm {
            name: "registry_test_fixed",
            source: "this test",
            summary: "the stand-in under a name",
            make: |_| Box::new(StandIn::default()),
            defines: &[],
        };
        register(entry).unwrap();
        let cfg = CcConfig::parse("registry_test_fixed:rto=0.5").unwrap();
        assert_eq!(cfg.name(), "registry_test_fixed");
        assert_eq!(cfg.get("rto").as_deref(), Some("0.5"));
        assert_eq!(cfg.to_string(), "registry_test_fixed:rto=0.5");
        assert_eq!(cfg, CcConfig::parse("registry_test_fixed : rto = 0.50").unwrap());
        assert_ne!(cfg, CcConfig::new("registry_test_fixed").unwrap());
        assert_eq!(cfg.build().rto_bounds().0, crate::Duration::from_millis(500));
        let all = algorithms();
        assert_eq!(all.len(), ALGORITHMS.len() + registered::all().len());
        assert!(all[ALGORITHMS.len()..].iter().any(|a| a.name == "registry_test_fixed"));
        // its own rules hold after every set
        let e = CcConfig::parse("registry_test_fixed:backoff=0.5").unwrap_err().to_string();
        assert_eq!(e, "registry_test_fixed: backoff must be >= 1");

        assert_eq!(register(entry).unwrap_err(), RegisterError::Taken("registry_test_fixed"));
        assert_eq!(register(Algorithm { name: "cocoa", ..entry }).unwrap_err(), RegisterError::Taken("cocoa"));
        for bad in ["", "Cocoa", "my-alg", "a:b", "tcp"] {
            assert_eq!(register(Algorithm { name: bad, ..entry }).unwrap_err(), RegisterError::BadName(bad));
        }
        let invalid = Algorithm {
            name: "registry_test_invalid",
            make: |_| {
                let mut s = StandIn::default();
                s.params.nstart = 0;
                Box::new(s)
            },
            ..entry
        };
        let e = register(invalid).unwrap_err();
        assert_eq!(
            e,
            RegisterError::Invalid { algorithm: "registry_test_invalid", key: "nstart", rule: "must be >= 1" }
        );
        assert!(CcConfig::new("registry_test_invalid").is_err());
    }

    #[test]
    fn parse_and_display() {
        let c = CcConfig::parse("fasor:max_retransmit=20, first_rttvar=pseudocode").unwrap();
        assert_eq!(c.to_string(), "fasor:max_retransmit=20,first_rttvar=pseudocode");
        assert_eq!(CcConfig::parse("cocoa").unwrap().to_string(), "cocoa");
        assert_eq!(CcConfig::parse("cocoa:aging=false").unwrap().to_string(), "cocoa:aging=false");
        assert_eq!(CcConfig::parse("cocoa4").unwrap().build().nstart(), 4);
        // extension parameters of gsrtc and cocoa_pp
        assert!(CcConfig::parse("gsrtc:w_initial=0").is_ok());
        assert!(CcConfig::parse("cocoa_pp:g_scale=0.003").is_ok());
        assert!(CcConfig::parse("cocoa:g_scale=0.003").is_err());
    }

    /// Over a base with other values, the text keeps what the base would change: CoCoA's own
    /// aging (on) over a base with it off, and nothing the base already has.
    #[test]
    fn spec_over_a_base_keeps_what_the_base_would_change() {
        let on = CcConfig::parse("cocoa:max_retransmit=20").unwrap();
        let base = CcConfig::parse("cocoa:max_retransmit=20,aging=false").unwrap();
        assert_eq!(on.to_string(), "cocoa:max_retransmit=20");
        assert_eq!(on.spec_over(&base), "cocoa:max_retransmit=20,aging=true");
        assert_eq!(base.spec_over(&base), "cocoa:max_retransmit=20,aging=false");
        assert_eq!(CcConfig::new("cocoa").unwrap().spec_over(&base), "cocoa:max_retransmit=4,aging=true");
    }

    #[test]
    fn errors_list_what_is_valid() {
        let e = CcConfig::parse("fasr").unwrap_err().to_string();
        assert!(
            e.contains("unknown algorithm 'fasr'") && e.contains("fasor_option") && e.contains("peakhopper"),
            "{e}"
        );
        let e = CcConfig::parse("default:foo=1").unwrap_err().to_string();
        assert!(e.contains("no parameter 'foo'") && e.contains("ack_timeout") && e.contains("rto_max"), "{e}");
        let e = CcConfig::parse("cocoa:vbf=sometimes").unwrap_err().to_string();
        assert!(e.contains("one of: once per_step"), "{e}");
        let e = CcConfig::parse("default:ack_random_factor=0.5").unwrap_err().to_string();
        assert!(e.contains("ack_random_factor must be >= 1"), "{e}");
        let e = CcConfig::parse("default:max_retransmit=99").unwrap_err().to_string();
        assert!(e.contains("<= 30"), "{e}");
        assert!(matches!(CcConfig::parse("default:nstart"), Err(SpecError::Syntax(_))));
        // typos that used to run something else
        assert_eq!(CcConfig::parse("fasor:"), Err(SpecError::NoParameters("fasor".into())));
        assert_eq!(
            CcConfig::parse("fasor:max_retransmit=4, max_retransmit=5"),
            Err(SpecError::DuplicateKey("max_retransmit".into()))
        );
        assert!(matches!(CcConfig::parse("fasor:max_retransmit=4,,nstart=1"), Err(SpecError::Syntax(_))));
        assert!(matches!(CcConfig::parse("fasor:=4"), Err(SpecError::Syntax(_))));
        let ok = CcConfig::parse(" fasor : max_retransmit = 5 , nstart = 1 ").unwrap();
        assert_eq!(ok.to_string(), "fasor:max_retransmit=5");
        assert!(CcConfig::parse("default:ack_timeout=inf").is_err());
    }
}
