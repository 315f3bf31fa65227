//! `coapcc algorithms`: the registry, for people and for programs.

use std::fmt::Write as _;

use coap_cc::{CcConfig, ALGORITHMS};

/// Arguments of `coapcc algorithms`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Show only this algorithm; a parameter list (`NAME:key=value,...`) shows those values.
    spec: Option<String>,
    /// Print one JSON array instead of text.
    #[arg(long)]
    json: bool,
}

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

/// Runs the command.
pub fn run(args: &Args) -> Result<(), Box<dyn std::error::Error>> {
    let configs: Vec<CcConfig> = match &args.spec {
        Some(spec) => vec![CcConfig::parse(spec)?],
        None => ALGORITHMS.iter().map(|a| CcConfig::new(a.name)).collect::<Result<_, _>>()?,
    };
    let out = if args.json { json(&configs) } else { text(&configs) };
    print!("{out}");
    Ok(())
}

fn text(configs: &[CcConfig]) -> String {
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
    out
}

fn json(configs: &[CcConfig]) -> String {
    let list: Vec<serde_json::Value> = configs
        .iter()
        .map(|cfg| {
            let a = cfg.algorithm();
            let ps: Vec<serde_json::Value> = params(cfg)
                .into_iter()
                .map(|p| serde_json::json!({ "name": p.name, "default": p.value, "doc": p.doc }))
                .collect();
            serde_json::json!({ "name": a.name, "source": a.source, "summary": a.summary, "spec": cfg.to_string(), "parameters": ps })
        })
        .collect();
    let mut s = serde_json::to_string_pretty(&list).unwrap_or_default();
    s.push('\n');
    s
}
