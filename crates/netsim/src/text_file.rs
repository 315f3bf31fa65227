//! Reading the text files a user names (scenarios, plans, mobility traces) within a bound, so
//! that a path such as `/dev/urandom` or `/dev/zero` is refused with a message instead of being
//! read until memory runs out.

use std::io::Read;
use std::path::Path;

/// The most a scenario or a plan may hold: 16 MiB (the largest preset is a few KB).
pub const MAX_SCENARIO_BYTES: u64 = 16 << 20;

/// The most a positions file may hold: 256 MiB (a 36-mote trace of 1,080 s at 10 positions a
/// second is about 20 MB).
pub const MAX_POSITIONS_BYTES: u64 = 256 << 20;

/// The UTF-8 text of `path`, at most `max` bytes; an error that names the path and what is wrong.
pub fn read_text(path: &Path, max: u64) -> Result<String, String> {
    let file = std::fs::File::open(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let mut bytes = Vec::new();
    file.take(max + 1).read_to_end(&mut bytes).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    if bytes.len() as u64 > max {
        return Err(format!("{} is larger than {} MiB: not a file of this kind", path.display(), max >> 20));
    }
    String::from_utf8(bytes).map_err(|e| {
        format!("{} is not UTF-8 text (a byte at offset {} is not)", path.display(), e.utf8_error().valid_up_to())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endless_or_binary_files_are_refused_and_text_is_read() {
        let err = read_text(Path::new("/dev/zero"), 1 << 20).unwrap_err();
        assert_eq!(err, "/dev/zero is larger than 1 MiB: not a file of this kind");
        let d = std::env::temp_dir().join(format!("coapcc-text-file-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        let bin = d.join("bin");
        std::fs::write(&bin, b"seed = 1\n\xff\xfe").unwrap();
        assert!(read_text(&bin, 1 << 20).unwrap_err().contains("not UTF-8 text (a byte at offset 9"));
        let text = d.join("ok.toml");
        std::fs::write(&text, "seed = 1\n").unwrap();
        assert_eq!(read_text(&text, 9).unwrap(), "seed = 1\n");
        assert!(read_text(&text, 8).unwrap_err().contains("larger than"));
        assert!(read_text(&d.join("none"), 8).unwrap_err().starts_with("cannot read"));
        std::fs::remove_dir_all(&d).unwrap();
    }
}
