//! Helpers shared by the integration tests.

use std::process::Command;

/// Is `bin` on the PATH? When COAPCC_INTEROP is set (scripts/test installed the peers), a missing
/// peer fails the test; otherwise the caller skips, with a note on stderr.
pub fn have(bin: &str) -> bool {
    let found = Command::new("sh")
        .arg("-c")
        .arg(format!("command -v {bin}"))
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    if !found {
        assert!(
            std::env::var("COAPCC_INTEROP").is_err(),
            "{bin} is missing but COAPCC_INTEROP is set (scripts/test installs it)"
        );
        eprintln!("skipped: {bin} is not installed (scripts/test installs it)");
    }
    found
}
