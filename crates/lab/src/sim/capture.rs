//! `sim --pcap FILE`: replication 0 of each algorithm captured ([`netsim::capture`]): every
//! packet its hosts send (a datagram, or a TCP segment) on the bottleneck, every 802.15.4 frame
//! on the mesh's air, in a pcap file Wireshark reads. With several algorithms each gets its
//! own file, FILE's stem followed by the algorithm's name (`run.pcap` → `run-cocoa.pcap`; a name
//! that two runs share is numbered too). The files are created before the run, so a path that
//! cannot be written stops it at once.

use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use netsim::capture::{Addressing, Capture};

type Error = Box<dyn std::error::Error>;

/// A finished capture: the algorithm's index, its file, and the datagrams written or why not.
type Finished = (usize, PathBuf, Result<u64, String>);

/// The captures of one run, one per algorithm, each taken by its replication 0.
#[derive(Debug, Default)]
pub(crate) struct Captures {
    /// Each algorithm's name (its spec before any `:`) and what its capture holds.
    names: Vec<(String, &'static str)>,
    slots: Vec<Mutex<Option<(PathBuf, Capture)>>>,
    done: Mutex<Vec<Finished>>,
}

/// The file of algorithm `i` of `names` (several: FILE's stem, `-`, the name; a name two share
/// numbered as well).
fn path_of(file: &Path, names: &[&str], i: usize) -> PathBuf {
    if names.len() == 1 {
        return file.to_path_buf();
    }
    let stem = file.file_stem().map_or_else(String::new, |s| s.to_string_lossy().into_owned());
    let ext = file.extension().map_or_else(|| "pcap".into(), |e| e.to_string_lossy().into_owned());
    let shared = names.iter().filter(|n| **n == names[i]).count() > 1;
    let name =
        if shared { format!("{stem}-{}-{}.{ext}", i + 1, names[i]) } else { format!("{stem}-{}.{ext}", names[i]) };
    file.with_file_name(name)
}

impl Captures {
    /// No capture.
    pub(crate) fn none() -> Self {
        Captures::default()
    }

    /// A capture into `file` for each algorithm (its name, and where its hosts are).
    pub(crate) fn open(file: &Path, algorithms: &[(&str, Addressing)]) -> Result<Self, Error> {
        let names: Vec<&str> = algorithms.iter().map(|(n, _)| n.split(':').next().unwrap_or(n)).collect();
        let mut slots = Vec::with_capacity(algorithms.len());
        for (i, (_, addressing)) in algorithms.iter().enumerate() {
            let path = path_of(file, &names, i);
            let f = File::create(&path).map_err(|e| format!("--pcap: cannot create {}: {e}", path.display()))?;
            let capture = Capture::new(Box::new(BufWriter::new(f)), addressing.clone())
                .map_err(|e| format!("--pcap: cannot write {}: {e}", path.display()))?;
            slots.push(Mutex::new(Some((path, capture))));
        }
        let names = names.iter().zip(algorithms).map(|(n, (_, a))| (n.to_string(), a.records())).collect();
        Ok(Captures { names, slots, done: Mutex::default() })
    }

    /// Algorithm `i`'s capture if `rep` is the one captured (0) and it is not taken yet.
    pub(crate) fn take(&self, i: usize, rep: u32) -> Option<(PathBuf, Capture)> {
        let slot = self.slots.get(i).filter(|_| rep == 0)?;
        slot.lock().unwrap_or_else(|p| p.into_inner()).take()
    }

    /// Algorithm `i`'s capture is over: `written` packets, or why it failed.
    pub(crate) fn done(&self, i: usize, path: PathBuf, written: Result<u64, String>) {
        self.done.lock().unwrap_or_else(|p| p.into_inner()).push((i, path, written));
    }

    /// Tells on stderr what each file holds; an error if a capture failed.
    pub(crate) fn tell(self) -> Result<(), Error> {
        let mut done = self.done.into_inner().unwrap_or_else(|p| p.into_inner());
        done.sort_by_key(|d| d.0);
        for (i, path, written) in done {
            let (name, records) = self.names.get(i).map_or(("?", "records"), |(n, r)| (n.as_str(), *r));
            match written {
                Ok(n) => eprintln!("coapcc sim: {}: {n} {records} in replication 0 of {name}", path.display()),
                Err(e) => return Err(format!("--pcap: {}: {e}", path.display()).into()),
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn several_algorithms_get_a_file_each_named_after_them() {
        let f = Path::new("out/run.pcap");
        assert_eq!(path_of(f, &["cocoa"], 0), Path::new("out/run.pcap"));
        assert_eq!(path_of(f, &["cocoa", "default"], 1), Path::new("out/run-default.pcap"));
        // one name twice: numbered
        let names = ["default", "default", "cocoa"];
        assert_eq!(path_of(f, &names, 0), Path::new("out/run-1-default.pcap"));
        assert_eq!(path_of(f, &names, 1), Path::new("out/run-2-default.pcap"));
        assert_eq!(path_of(f, &names, 2), Path::new("out/run-cocoa.pcap"));
        assert_eq!(path_of(Path::new("trace"), &["a", "b"], 0), Path::new("trace-a.pcap"));
    }
}
