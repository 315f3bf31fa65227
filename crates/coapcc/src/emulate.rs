//! `coapcc emulate`: real stacks through the modelled networks at the IP level
//! ([`coap_net::emulate`]): a namespace for the clients (one address each) and one for the
//! server, joined through the wired bottleneck (with the testbed's TCP configuration in both
//! namespaces) or a mesh (its client motes and its server) on the wall clock; optionally the
//! server's and the clients' commands run inside them.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::Stdio;

use coap_net::emulate::{self, Emulator, EmulatorConfig, Hosts};
use netsim::emulation::{Emulation, LiveMedium};
use netsim::tcp::TcpParams;

type Error = Box<dyn std::error::Error>;

/// Arguments of `coapcc emulate`.
#[derive(Debug, clap::Args)]
#[command(after_help = "Example (CoAP over the kernel's TCP, 10 clients, the 2500-byte buffer):\n  \
    coapcc emulate --clients 10 --buffer 2500 \\\n    \
    --server-exec 'coapcc server --tcp --bind $COAPCC_SERVER:5683 --no-deadlines --max-per-source 100000' \\\n    \
    --clients-exec 'coapcc load --server coap+tcp://$COAPCC_SERVER/test --clients 10 --bind $COAPCC_CLIENT:0 --bind-each --no-deadlines --json > load.json' \\\n    \
    --report emulate.json\n\n\
    The server's namespace has 10.200.0.1 ($COAPCC_SERVER); client i has 10.201.0.1 + i ($COAPCC_CLIENT is the\n\
    first). Without --clients-exec it runs until Ctrl-C (or --duration) and prints the namespaces' names, for\n\
    `ip netns exec NAME ...`. Needs root, /dev/net/tun and iproute2.")]
pub struct Args {
    /// A scenario file (the simulator's). The wired bottleneck's: its links, buffers, MTU, hop
    /// jitter, error models, and its [tcp] table for the kernels' TCP (default: the `thesis`
    /// preset). A mesh's (`env = "lln"`): its motes, radio and routing, with its first client's
    /// server as the server and that server's clients as the clients (UDP only).
    #[arg(long, value_name = "FILE", conflicts_with = "preset")]
    scenario: Option<PathBuf>,
    /// A named preset instead of --scenario (`coapcc presets`), e.g. nitk-cocoapp-grid6x6.
    #[arg(long, value_name = "NAME")]
    preset: Option<String>,
    /// Client addresses (one per client; default: the scenario's clients; on a mesh, its first N
    /// client motes).
    #[arg(long, value_parser = crate::args::count, allow_negative_numbers = true)]
    clients: Option<u32>,
    #[command(flatten)]
    link: crate::net::LinkOverrides,
    /// A shell command run in the server's namespace from the start (killed at the end).
    #[arg(long, value_name = "CMD")]
    server_exec: Option<String>,
    /// A shell command run in the clients' namespace once the server listens (see --wait-port);
    /// the emulation ends when it exits, and its exit status is ours.
    #[arg(long, value_name = "CMD")]
    clients_exec: Option<String>,
    /// With --server-exec: before the clients start, wait (at most 10 s) until something in the
    /// server's namespace listens on this TCP port or has bound this UDP port.
    #[arg(long, value_name = "PORT", default_value_t = 5683)]
    wait_port: u16,
    /// Stop after this many seconds (default: when the clients' command ends, or Ctrl-C or
    /// SIGTERM; after SIGKILL the next start removes what was left).
    #[arg(long, value_name = "SECS", value_parser = crate::args::positive_secs, allow_negative_numbers = true)]
    duration: Option<f64>,
    /// Leave the namespaces' TCP at this kernel's defaults instead of the scenario's [tcp].
    #[arg(long)]
    kernel_defaults: bool,
    /// Write what was counted as JSON: the model's links, the TCP segments per client
    /// (retransmissions, the longest wait before a segment was sent again, duplicates
    /// delivered) and the kernels' TCP counters of both namespaces (as `nstat` names them).
    #[arg(long, value_name = "FILE")]
    report: Option<PathBuf>,
}

/// The kernel settings that stand for the TCP model's parameters: sysctls (per namespace) and
/// route attributes; and the parameters no per-namespace setting reaches, with the kernel's
/// behaviour instead.
pub fn kernel_tcp(p: &TcpParams) -> (Vec<(String, String)>, Vec<String>, Vec<String>) {
    let b = |v: bool| if v { "1" } else { "0" }.to_string();
    let sysctls: Vec<(&str, String)> = vec![
        ("tcp_congestion_control", "reno".into()),
        ("tcp_timestamps", "0".into()),
        ("tcp_syn_retries", p.syn_retries.min(127).to_string()),
        ("tcp_synack_retries", p.syn_retries.min(255).to_string()),
        ("tcp_retries2", p.retries2.to_string()),
        ("tcp_sack", b(p.sack)),
        ("tcp_dsack", b(p.sack)),
        ("tcp_frto", if p.frto { "2" } else { "0" }.into()),
        ("tcp_early_retrans", p.early_retrans.to_string()),
        ("tcp_recovery", b(p.rack)),
        ("tcp_slow_start_after_idle", b(p.slow_start_after_idle)),
        ("tcp_orphan_retries", p.orphan_retries.to_string()),
        ("tcp_fin_timeout", (p.fin_timeout.round() as u64).to_string()),
        ("tcp_rto_max_ms", ((p.max_rto * 1e3).round() as u64).to_string()),
        // the testbed had no control-block sharing (RFC 2140): a connection does not start
        // from the RTT and window its predecessors to the same host left in the route cache
        ("tcp_no_metrics_save", "1".into()),
    ];
    let sysctls = sysctls.into_iter().map(|(k, v)| (format!("net/ipv4/{k}"), v)).collect();
    let attrs = vec![
        "rto_min".to_string(),
        format!("{}ms", (p.min_rto * 1e3).round() as u64),
        "initcwnd".to_string(),
        p.init_cwnd.to_string(),
    ];
    let mut fixed = vec![format!("delayed_ack {} s (the kernel's adapts between 40 and 200 ms)", p.delayed_ack)];
    if p.initial_rto != 1.0 {
        fixed.push(format!("initial_rto {} s (the kernel's is 1 s)", p.initial_rto));
    }
    if !p.quickack {
        fixed.push("quickack=false (the kernel's quick-ACK mode is always on)".into());
    }
    if !p.retries_by_time || !p.linux_close || p.time_wait != 60.0 {
        fixed.push("retries_by_time/linux_close/time_wait (the kernel's are Linux's)".into());
    }
    (sysctls, attrs, fixed)
}

/// The kernel's TCP counters in the calling thread's namespace, `nstat`'s names (`TcpExtTCPLossProbes`).
fn counters() -> std::io::Result<BTreeMap<String, u64>> {
    let mut out = BTreeMap::new();
    for file in ["snmp", "netstat"] {
        let text = std::fs::read_to_string(format!("/proc/thread-self/net/{file}"))?;
        let lines: Vec<&str> = text.lines().collect();
        for pair in lines.chunks(2) {
            let [names, values] = pair else { continue };
            let (Some((group, names)), Some((_, values))) = (names.split_once(':'), values.split_once(':')) else {
                continue;
            };
            if !group.starts_with("Tcp") {
                continue;
            }
            for (n, v) in names.split_whitespace().zip(values.split_whitespace()) {
                if let Ok(v) = v.parse::<u64>() {
                    out.insert(format!("{group}{n}"), v);
                }
            }
        }
    }
    Ok(out)
}

/// Whether something in the calling thread's namespace listens on TCP `port` or bound UDP `port`.
fn listening(port: u16) -> bool {
    let hex = format!(":{port:04X}");
    let check = |file: &str, state: Option<&str>| {
        std::fs::read_to_string(format!("/proc/thread-self/net/{file}")).is_ok_and(|t| {
            t.lines().skip(1).any(|l| {
                let f: Vec<&str> = l.split_whitespace().collect();
                f.get(1).is_some_and(|a| a.ends_with(&hex)) && state.is_none_or(|s| f.get(3) == Some(&s))
            })
        })
    };
    check("tcp", Some("0A")) || check("udp", None)
}

/// Waits (at most 10 s) until something in `ns` listens on `port`; an error if `server` ends first
/// or nothing does.
async fn wait_for_server(
    ns: &coap_net::emulate::netns::Namespace,
    server: &mut tokio::process::Child,
    port: u16,
) -> Result<(), Error> {
    // ten seconds of the wall clock, however long each look takes (200 looks had taken 26 s on a
    // loaded machine)
    let watch = lab::wall::Stopwatch::start();
    while watch.seconds() < 10.0 {
        if let Some(st) = server.try_wait()? {
            return Err(format!("--server-exec ended ({st}) before the clients started").into());
        }
        if ns.run_in(|| Ok(listening(port)))? {
            return Ok(());
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    Err(format!("nothing listens on port {port} in the server's namespace after 10 s (--wait-port)").into())
}

/// Runs `coapcc emulate`: the scenario's world gives its network live ([`Emulation`]); the
/// namespaces, the commands and the report are the same for every world.
pub fn run(args: &Args) -> Result<(), Error> {
    let (label, emulation) = crate::net::emulation(args.scenario.as_deref(), args.preset.as_deref(), &args.link)?;
    let Emulation { mut medium, server, clients: hosts, default_clients, size, mtu, tcp, banner, mut scenario, .. } =
        emulation;
    let clients = args.clients.unwrap_or(default_clients);
    if clients > emulate::MAX_CLIENTS {
        return Err(crate::usage(format!("--clients: at most {}", emulate::MAX_CLIENTS)));
    }
    let hosts = match hosts.first(clients) {
        Ok(hosts) => hosts,
        Err(available) => {
            return Err(crate::usage(format!("--clients: {label} has {available} clients (of its first server)")))
        }
    };
    let mut cfg = EmulatorConfig::new(clients, mtu);
    let tcp_note = match (&tcp, args.kernel_defaults) {
        (None, _) => String::new(),
        (Some(_), true) => {
            scenario["tcp"] = "kernel defaults".into();
            "\ncoapcc emulate: TCP: this kernel's defaults".to_string()
        }
        (Some(p), false) => {
            let (sysctls, attrs, fixed) = kernel_tcp(p);
            (cfg.sysctls, cfg.route_attrs) = (sysctls, attrs);
            scenario["tcp"] = serde_json::to_value(p)?;
            format!(
                "\ncoapcc emulate: TCP: the scenario's [tcp] (reno, timestamps off); not settable per namespace: {}",
                fixed.join("; ")
            )
        }
    };
    scenario["client_hosts"] = hosts.iter().map(|h| h.0).collect::<Vec<_>>().into();
    let some = if clients < default_clients {
        format!("; {clients} of its {default_clients} clients emulated")
    } else {
        String::new()
    };
    let banner = format!("{banner}{some}{tcp_note}");
    let hosts = Hosts { server, clients: hosts, size };
    drive(args, cfg, hosts, &mut *medium, banner, scenario)
}

/// Sets the namespaces up, runs the commands, emulates `medium` until the clients' command ends
/// (or --duration, or Ctrl-C), and reports.
fn drive(
    args: &Args,
    cfg: EmulatorConfig,
    hosts: Hosts,
    medium: &mut dyn LiveMedium,
    banner: String,
    scenario: serde_json::Value,
) -> Result<(), Error> {
    let clients = cfg.clients;
    // SIGTERM and SIGINT are ours before anything is made: arriving during the set-up they end
    // it through the clean-up (their default action would leave the namespaces behind)
    let rt = crate::net::runtime()?;
    let (mut term, mut int) = {
        let _in = rt.enter();
        use tokio::signal::unix::{signal, SignalKind};
        (signal(SignalKind::terminate())?, signal(SignalKind::interrupt())?)
    };
    let mut emu = Emulator::setup(cfg).map_err(|e| format!("cannot set the emulation up: {e}"))?;
    let early = rt.block_on(async {
        tokio::select! {
            biased;
            _ = term.recv() => true,
            _ = int.recv() => true,
            _ = std::future::ready(()) => false,
        }
    });
    if early {
        drop(emu);
        return Err("stopped by a signal during the set-up (its namespaces removed)".into());
    }
    for name in &emu.swept {
        eprintln!("coapcc emulate: removed {name}, left by an emulator no longer running");
    }
    let (cns, sns) = (emu.clients_ns().name().to_string(), emu.server_ns().name().to_string());
    eprintln!(
        "coapcc emulate: clients {} to {} in namespace {cns}, server {} in {sns}; {banner}",
        emulate::client_addr(0),
        emulate::client_addr(clients - 1),
        emulate::SERVER_ADDR,
    );
    if !emu.missing_sysctls.is_empty() {
        eprintln!("coapcc emulate: this kernel lacks {} (left as they are)", emu.missing_sysctls.join(", "));
    }
    let env = [
        ("COAPCC_SERVER", emulate::SERVER_ADDR.to_string()),
        ("COAPCC_CLIENT", emulate::client_addr(0).to_string()),
        ("COAPCC_CLIENTS", clients.to_string()),
    ];
    let spawn = |ns: &coap_net::emulate::netns::Namespace, cmd: &str| {
        let mut c = ns.command("sh");
        c.args(["-c", cmd]).envs(env.iter().map(|(k, v)| (k, v))).stdin(Stdio::null());
        tokio::process::Command::from(c).kill_on_drop(true).spawn()
    };
    let watch = lab::wall::Stopwatch::start();
    let (stats, status) = rt.block_on(async {
        let mut server = match &args.server_exec {
            Some(cmd) => Some(spawn(emu.server_ns(), cmd).map_err(|e| format!("--server-exec: {e}"))?),
            None => None,
        };
        if let (Some(srv), true) = (server.as_mut(), args.clients_exec.is_some()) {
            wait_for_server(emu.server_ns(), srv, args.wait_port).await?;
        }
        let mut clients_cmd = match &args.clients_exec {
            Some(cmd) => Some(spawn(emu.clients_ns(), cmd).map_err(|e| format!("--clients-exec: {e}"))?),
            None => {
                eprintln!(
                    "coapcc emulate: running (Ctrl-C stops); e.g. ip netns exec {cns} coapcc client coap://{}/test",
                    emulate::SERVER_ADDR
                );
                None
            }
        };
        let duration = args.duration;
        let status = std::sync::Mutex::new(None);
        let stop = async {
            let clients_done = async {
                match clients_cmd.as_mut() {
                    Some(c) => {
                        let st = c.wait().await;
                        *status.lock().unwrap_or_else(|e| e.into_inner()) = Some(st);
                    }
                    None => std::future::pending().await,
                }
            };
            let timer = async {
                match duration {
                    Some(d) => tokio::time::sleep(std::time::Duration::from_secs_f64(d)).await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                _ = clients_done => {}
                _ = timer => {}
                _ = int.recv() => {}
                _ = term.recv() => {}
            }
        };
        let stats = emu.run_live(&hosts, medium, stop).await?;
        if let Some(mut srv) = server {
            let _ = srv.start_kill();
            let _ = srv.wait().await;
        }
        let status = status.into_inner().unwrap_or_else(|e| e.into_inner());
        Ok::<_, Error>((stats, status))
    })?;
    let wall_s = watch.seconds();
    let kernel_c = emu.clients_ns().run_in(counters)?;
    let kernel_s = emu.server_ns().run_in(counters)?;
    eprintln!(
        "coapcc emulate: {wall_s:.1} s; {}; {} foreign packets dropped; TCP data segments up {} ({} retransmitted), down {} ({} retransmitted, {} delivered twice)",
        medium.report_line(), stats.foreign,
        stats.tcp.up.data_segments, stats.tcp.up.retransmissions, stats.tcp.down.data_segments, stats.tcp.down.retransmissions, stats.tcp.down.duplicates
    );
    if let Some(path) = &args.report {
        let dir = |d: &emulate::tally::DirCounts| serde_json::json!({"data_segments": d.data_segments, "retransmissions": d.retransmissions, "duplicates": d.duplicates});
        let per_client: Vec<serde_json::Value> = stats
            .tcp
            .clients
            .iter()
            .map(|c| serde_json::json!({"retransmissions": c.retransmissions, "max_gap_s": c.max_gap.as_secs_f64(), "max_gap_down_s": c.max_gap_down.as_secs_f64(), "duplicates": c.duplicates}))
            .collect();
        let v = serde_json::json!({
            "clients": clients,
            "wall_s": wall_s,
            "scenario": scenario,
            "network": medium.report(),
            "packets": { "up": stats.up_packets, "down": stats.down_packets, "foreign": stats.foreign, "write_errors": stats.write_errors },
            "tcp": { "up": dir(&stats.tcp.up), "down": dir(&stats.tcp.down), "untracked": stats.tcp.untracked, "clients": per_client },
            "kernel": { "clients": kernel_c, "server": kernel_s },
        });
        std::fs::write(path, serde_json::to_string_pretty(&v)? + "\n")
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    }
    drop(emu);
    match status {
        Some(Ok(st)) if !st.success() => {
            use std::os::unix::process::ExitStatusExt;
            // its code, or a signal's death as a shell reports it (128 + the signal)
            let code = st.code().or_else(|| st.signal().map(|s| 128 + s)).map_or(1, |c| u8::try_from(c).unwrap_or(1));
            Err(Box::new(crate::ExitWith { code, message: format!("--clients-exec ended with {st}") }))
        }
        Some(Err(e)) => Err(format!("--clients-exec: {e}").into()),
        _ => Ok(()),
    }
}
