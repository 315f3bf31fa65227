//! Results on standard output. A reader that stops early (`coapcc sim --json | head`) closes
//! the pipe, and the next write fails with `BrokenPipe`: `main` takes that for a normal end (as
//! `cat` ends), where Rust's `println!` would panic with a stack trace.

use std::io::{ErrorKind, Write};

/// Writes `text` to stdout and flushes it.
pub fn write(text: &str) -> std::io::Result<()> {
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())?;
    out.flush()
}

/// Writes `bytes` and a newline to stdout and flushes them.
pub fn write_line(bytes: &[u8]) -> std::io::Result<()> {
    let mut out = std::io::stdout().lock();
    out.write_all(bytes)?;
    out.write_all(b"\n")?;
    out.flush()
}

/// Writes `bytes` to stdout as they are, and a newline after them if `newline`, and flushes.
pub fn write_bytes(bytes: &[u8], newline: bool) -> std::io::Result<()> {
    let mut out = std::io::stdout().lock();
    out.write_all(bytes)?;
    if newline {
        out.write_all(b"\n")?;
    }
    out.flush()
}

/// Writes `value` to stdout as pretty-printed JSON and a newline.
pub fn json<T: serde::Serialize + ?Sized>(value: &T) -> Result<(), Box<dyn std::error::Error>> {
    Ok(write_line(serde_json::to_string_pretty(value)?.as_bytes())?)
}

/// Whether `e` is a write to a standard output nobody reads any more.
pub fn closed(e: &(dyn std::error::Error + 'static)) -> bool {
    e.downcast_ref::<std::io::Error>().is_some_and(|e| e.kind() == ErrorKind::BrokenPipe)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_broken_pipe_counts_as_a_closed_stdout() {
        let pipe: Box<dyn std::error::Error> = Box::new(std::io::Error::from(ErrorKind::BrokenPipe));
        let other: Box<dyn std::error::Error> = Box::new(std::io::Error::from(ErrorKind::PermissionDenied));
        let text: Box<dyn std::error::Error> = "Broken pipe".into();
        assert!(closed(pipe.as_ref()));
        assert!(!closed(other.as_ref()));
        assert!(!closed(text.as_ref()));
    }
}
