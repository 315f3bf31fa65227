//! The algorithms' registry as text and JSON (`coapcc algorithms`, the Python package).

use std::fmt::Write as _;

use coap_cc::{algorithms, CcConfig};

struct Param {
    name: &'static str,
    value: String,
    doc: &'static str,
}

fn params(cfg: &CcConfig) -> Vec<Param> {
    let mut v = Vec::new();
    cfg.describe(&mut |p| v.push(Param { name: p.name, value: p.value.to_string(), doc: p.doc }));
    v
}

/// What `coapcc algorithms --json` prints: every algorithm, then `tcp`, with its parameters'
/// defaults.
pub fn all_json() -> Result<String, Box<dyn std::error::Error>> {
    let configs: Vec<CcConfig> = algorithms().iter().map(|a| CcConfig::new(a.name)).collect::<Result<_, _>>()?;
    Ok(json(&configs, true))
}

/// The `tcp` transport's entry: not a coap-cc controller, but a `--cc` choice of the simulator
/// and of `coapcc load`.
fn tcp_params() -> Vec<(&'static str, String, &'static str)> {
    netsim::tcp::TcpParams::default().table()
}

const TCP_SUMMARY: &str = "CoAP over TCP: no CoAP retransmission; reliability and congestion control from TCP (in sim a model of Linux 4.9's TCP, every mechanism switchable; the OS's TCP in load)";
const TCP_SOURCE: &str = "RFC 8323; the reference testbed's Linux TCP configuration (docs/bottleneck.md)";

pub fn text(configs: &[CcConfig], show_tcp: bool) -> String {
    let mut out = String::new();
    for cfg in configs {
        let a = cfg.algorithm();
        let _ = writeln!(out, "{}  —  {}", a.name, a.summary);
        let _ = writeln!(out, "    source: {}", a.source);
        let ps = params(cfg);
        let width = ps.iter().map(|p| p.name.len() + p.value.len() + 1).max().unwrap_or(0);
        for p in ps {
            let kv = format!("{}={}", p.name, p.value);
            let _ = writeln!(out, "    {kv:<width$}  {}", p.doc);
        }
        out.push('\n');
    }
    if show_tcp {
        let _ = writeln!(out, "tcp  —  {TCP_SUMMARY}\n    source: {TCP_SOURCE}");
        for (k, v, doc) in tcp_params() {
            let kv = format!("{k}={v}");
            let _ = writeln!(out, "    {kv:<22}  {doc}");
        }
    }
    out
}

/// A parameter's value as JSON: a number or a boolean where it is one, else its name.
fn typed(value: &str) -> serde_json::Value {
    match value {
        "true" => true.into(),
        "false" => false.into(),
        v => match (v.parse::<i64>(), v.parse::<f64>()) {
            (Ok(i), _) => i.into(),
            (_, Ok(n)) if n.is_finite() => serde_json::Number::from_f64(n).map_or_else(|| v.into(), Into::into),
            _ => v.into(),
        },
    }
}

pub fn json(configs: &[CcConfig], show_tcp: bool) -> String {
    let mut list: Vec<serde_json::Value> = configs
        .iter()
        .map(|cfg| {
            let a = cfg.algorithm();
            let ps: Vec<serde_json::Value> = params(cfg)
                .into_iter()
                .map(|p| serde_json::json!({ "name": p.name, "default": typed(&p.value), "doc": p.doc }))
                .collect();
            serde_json::json!({ "name": a.name, "source": a.source, "summary": a.summary, "spec": cfg.to_string(), "parameters": ps })
        })
        .collect();
    if show_tcp {
        let ps: Vec<serde_json::Value> = tcp_params()
            .into_iter()
            .map(|(k, v, doc)| serde_json::json!({ "name": k, "default": typed(&v), "doc": doc }))
            .collect();
        list.push(serde_json::json!({ "name": "tcp", "source": TCP_SOURCE, "summary": TCP_SUMMARY, "spec": "tcp", "parameters": ps }));
    }
    let mut s = serde_json::to_string_pretty(&list).unwrap_or_default();
    s.push('\n');
    s
}
