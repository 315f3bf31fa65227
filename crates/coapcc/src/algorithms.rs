//! `coapcc algorithms`: the registry, for people and for programs.

use coap_cc::{algorithms, CcConfig};

/// Arguments of `coapcc algorithms`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Show only this algorithm; a parameter list (`NAME:key=value,...`) shows those values.
    spec: Option<String>,
    /// Print one JSON array instead of text.
    #[arg(long)]
    json: bool,
}

/// Runs the command.
pub fn run(args: &Args) -> Result<(), Box<dyn std::error::Error>> {
    let only_tcp = args.spec.as_deref() == Some("tcp");
    let configs: Vec<CcConfig> = match &args.spec {
        Some(_) if only_tcp => Vec::new(),
        Some(spec) => vec![CcConfig::parse(spec).map_err(|e| netsim::scenario::spec_error(&e))?],
        None => algorithms().iter().map(|a| CcConfig::new(a.name)).collect::<Result<_, _>>()?,
    };
    let show_tcp = args.spec.is_none() || only_tcp;
    let out =
        if args.json { lab::algorithms::json(&configs, show_tcp) } else { lab::algorithms::text(&configs, show_tcp) };
    crate::stdout::write(&out)?;
    Ok(())
}
