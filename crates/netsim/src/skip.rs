//! What the results leave out of their JSON (`skip_serializing_if`).

/// Whether a counter is zero: what the records leave out of their JSON
/// (`skip_serializing_if`).
pub(crate) fn is_zero<T: Default + PartialEq>(v: &T) -> bool {
    *v == T::default()
}
