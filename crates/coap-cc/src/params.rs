//! Named, typed algorithm parameters: `name:key=value,...` on the command line and in scenario
//! files. Each algorithm declares its parameters once with [`params!`], which writes the struct,
//! its `Default` (the specification's defaults), and the [`Params`] setter and description.

use core::fmt;

/// A parameter value: parsed from text, shown as text.
pub trait ParamValue: Sized + fmt::Display {
    /// What the text must look like, for error messages.
    const EXPECTED: &'static str;
    /// Parses the text.
    fn parse(s: &str) -> Option<Self>;
}

impl ParamValue for f64 {
    const EXPECTED: &'static str = "a finite number";
    fn parse(s: &str) -> Option<Self> {
        s.trim().parse::<f64>().ok().filter(|v| v.is_finite())
    }
}
impl ParamValue for u32 {
    const EXPECTED: &'static str = "a non-negative integer";
    fn parse(s: &str) -> Option<Self> {
        s.trim().parse().ok()
    }
}
impl ParamValue for bool {
    const EXPECTED: &'static str = "true or false";
    fn parse(s: &str) -> Option<Self> {
        match s.trim() {
            "true" | "1" | "yes" | "on" => Some(true),
            "false" | "0" | "no" | "off" => Some(false),
            _ => None,
        }
    }
}

/// Declares an enum parameter with its textual names.
#[doc(hidden)]
#[macro_export]
macro_rules! __coap_cc_choice {
    ($(#[$m:meta])* pub enum $name:ident { $($(#[$vm:meta])* $variant:ident = $text:literal),+ $(,)? }) => {
        $(#[$m])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub enum $name { $($(#[$vm])* $variant),+ }
        impl $crate::params::ParamValue for $name {
            const EXPECTED: &'static str = concat!("one of:" $(, " ", $text)+);
            fn parse(s: &str) -> Option<Self> {
                match s.trim() { $($text => Some($name::$variant),)+ _ => None }
            }
        }
        impl core::fmt::Display for $name {
            fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                f.write_str(match self { $($name::$variant => $text),+ })
            }
        }
    };
}
pub use __coap_cc_choice as choice;

/// One parameter, for listings.
#[derive(Clone, Copy)]
pub struct ParamInfo<'a> {
    /// Its key.
    pub name: &'static str,
    /// Its current value.
    pub value: &'a dyn fmt::Display,
    /// What it means, with its source.
    pub doc: &'static str,
}

impl fmt::Debug for ParamInfo<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}={}", self.name, self.value)
    }
}

/// Why a parameter could not be set.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SetError {
    /// No parameter has that key.
    Unknown,
    /// The text is not a value of the parameter's type.
    BadValue {
        /// What was expected.
        expected: &'static str,
    },
}

/// Settable, listable parameters.
pub trait Params {
    /// Sets `key` from `value`.
    fn set(&mut self, key: &str, value: &str) -> Result<(), SetError>;
    /// Calls `f` with each parameter, in declaration order.
    fn describe(&self, f: &mut dyn FnMut(ParamInfo<'_>));
}

/// Declares a parameter struct. Each field: doc comment (shown by `coapcc algorithms`), name,
/// type, default.
#[doc(hidden)]
#[macro_export]
macro_rules! __coap_cc_params {
    ($(#[$m:meta])* pub struct $name:ident { $( #[doc = $doc:literal] $field:ident : $ty:ty = $default:expr ),* $(,)? }) => {
        $(#[$m])*
        #[derive(Debug, Clone, PartialEq)]
        pub struct $name { $( #[doc = $doc] pub $field: $ty ),* }
        impl Default for $name {
            fn default() -> Self { Self { $($field: $default),* } }
        }
        impl $crate::params::Params for $name {
            fn set(&mut self, key: &str, value: &str) -> Result<(), $crate::params::SetError> {
                match key {
                    $(stringify!($field) => {
                        self.$field = <$ty as $crate::params::ParamValue>::parse(value).ok_or(
                            $crate::params::SetError::BadValue { expected: <$ty as $crate::params::ParamValue>::EXPECTED },
                        )?;
                        Ok(())
                    })*
                    _ => Err($crate::params::SetError::Unknown),
                }
            }
            fn describe(&self, f: &mut dyn FnMut($crate::params::ParamInfo<'_>)) {
                $(f($crate::params::ParamInfo { name: stringify!($field), value: &self.$field, doc: $doc.trim_ascii() });)*
            }
        }
    };
}
pub use __coap_cc_params as params;

/// Implements [`Params`] for a configuration struct by delegating to its parameter field.
#[doc(hidden)]
#[macro_export]
macro_rules! __coap_cc_delegate_params {
    ($ty:ty, $field:ident) => {
        impl $crate::params::Params for $ty {
            fn set(&mut self, key: &str, value: &str) -> Result<(), $crate::params::SetError> {
                self.$field.set(key, value)
            }
            fn describe(&self, f: &mut dyn FnMut($crate::params::ParamInfo<'_>)) {
                self.$field.describe(f)
            }
        }
    };
}
pub use __coap_cc_delegate_params as delegate_params;

/// Checks the parameters every algorithm has: MAX_RETRANSMIT within the messaging layer's
/// limit, NSTART at least 1.
pub fn check_common(max_retransmit: u32, nstart: u32) -> Result<(), (&'static str, &'static str)> {
    check(max_retransmit <= crate::MAX_RETRANSMIT_LIMIT, "max_retransmit", "must be <= 30")?;
    check(nstart >= 1, "nstart", "must be >= 1")
}

/// The initial RTO must be positive and within the cap.
pub(crate) fn check_initial_rto(initial_rto: f64, rto_max: f64) -> Result<(), (&'static str, &'static str)> {
    check(initial_rto > 0.0 && initial_rto <= rto_max, "initial_rto", "need 0 < initial_rto <= rto_max")
}

/// Checks a value against a range, for `validate` methods.
pub fn check(ok: bool, key: &'static str, rule: &'static str) -> Result<(), (&'static str, &'static str)> {
    if ok {
        Ok(())
    } else {
        Err((key, rule))
    }
}
