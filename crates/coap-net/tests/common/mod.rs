//! Helpers shared by the integration tests.

use std::process::Command;

pub mod relay;

/// Is `bin` on the PATH? When COAPCC_INTEROP is set (scripts/test installed the peers), a missing
/// peer fails the test; otherwise the caller skips, with a note on stderr.
#[allow(dead_code)] // the relay's tests do not use it
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

/// libcoap's client observes `uri` (a `/time` resource: ten digits a second) for 3 s: it ends
/// well, with the response and at least two notifications, in order.
#[allow(dead_code)] // the relay's tests do not use it
pub fn libcoap_observes(uri: &str) {
    let out = Command::new("coap-client-notls").args(["-s", "3", "-m", "get", uri]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let out = String::from_utf8_lossy(&out.stdout);
    let out = out.trim();
    assert!(out.len() >= 30 && out.len() % 10 == 0 && out.bytes().all(|b| b.is_ascii_digit()), "{out}");
    let secs: Vec<u64> = (0..out.len() / 10).map(|i| out[10 * i..10 * i + 10].parse().unwrap()).collect();
    assert!(secs.windows(2).all(|w| w[1] >= w[0]), "{secs:?}");
}

/// A 2,000-byte printable body (larger than one message: it needs block-wise transfer).
#[allow(dead_code)] // the relay's tests do not use it
pub fn large_body() -> Vec<u8> {
    (0..2000u32).map(|i| b'a' + (i % 26) as u8).collect()
}
