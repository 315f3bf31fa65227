//! `coapcc server`, `client`, `load` and `relay`: the real-network commands.

use std::net::SocketAddr;
use std::path::PathBuf;

use coap_cc::CcConfig;
use coap_endpoint::Request;
use coap_wire::Code;
use netsim::WorkloadKind;

type Error = Box<dyn std::error::Error>;

pub(crate) fn runtime() -> Result<tokio::runtime::Runtime, Error> {
    Ok(tokio::runtime::Builder::new_multi_thread().enable_all().build()?)
}

pub(crate) async fn ctrl_c() {
    if tokio::signal::ctrl_c().await.is_err() {
        std::future::pending::<()>().await;
    }
}

/// Arguments of `coapcc server`.
#[derive(Debug, clap::Args)]
pub struct ServerArgs {
    /// Address and port to serve on (HOST:PORT; localhost:5683 works).
    #[arg(long, default_value = "0.0.0.0:5683", value_parser = crate::args::socket_addr)]
    bind: SocketAddr,
    /// Congestion control of the server's own separate responses (rarely matters).
    #[arg(long = "cc", default_value = "default")]
    cc: String,
    /// Stop after this many seconds (default: run until Ctrl-C).
    #[arg(long, value_name = "SECS", value_parser = crate::args::positive_secs, allow_negative_numbers = true)]
    duration: Option<f64>,
    /// Serve CoAP over TCP (RFC 8323) instead of UDP.
    #[arg(long)]
    tcp: bool,
    /// TCP: release a connection after this many seconds without traffic. (A peer must also send
    /// its CSM, and finish every frame it begins, within 10 s.)
    #[arg(long, value_name = "SECS", default_value_t = 60.0, value_parser = crate::args::positive_secs, allow_negative_numbers = true)]
    idle_timeout: f64,
    /// TCP: no CSM or frame deadline (by default a peer's CSM, and each frame it begins, must
    /// come within 10 s): a connection lasts as long as TCP keeps it (and --idle-timeout), as in
    /// the simulator.
    #[arg(long)]
    no_deadlines: bool,
    /// TCP: the listening socket's backlog: connections waiting for accept and, on Linux, the
    /// handshakes in progress (capped by net.core.somaxconn). Past it the kernel answers SYNs
    /// with SYN cookies or drops them.
    #[arg(long, value_name = "N", default_value_t = 1024, value_parser = clap::value_parser!(u32).range(1..))]
    backlog: u32,
    /// TCP: connections kept at once. When they are all open, the one that has carried no
    /// request for longest is closed to make room for a new one. Lowered to what the open-file
    /// limit (`ulimit -n`) leaves.
    #[arg(long, value_name = "N", default_value_t = 1024, value_parser = clap::value_parser!(u32).range(1..))]
    max_connections: u32,
    /// TCP: connections one source address keeps at once; further ones are closed at accept
    /// (`load` over TCP from one host with more clients than this needs it raised).
    #[arg(long, value_name = "N", default_value_t = 256, value_parser = clap::value_parser!(u32).range(1..))]
    max_per_source: u32,
    /// UDP: memory budget of the deduplication cache, bytes. Replies are kept for duplicates for
    /// EXCHANGE_LIFETIME (247 s) within it; when full, the oldest go early (reported at the end).
    #[arg(long, value_name = "BYTES", default_value_t = 64 << 20, value_parser = clap::value_parser!(u64).range(1024..))]
    dedup_bytes: u64,
    /// UDP: no amplification limit. By default what the server sends to a source (an IP
    /// address) that has not shown it receives is at most 3× what it sent plus
    /// --amplification-allowance bytes in each 60 s; past it a request gets 4.01 with an Echo
    /// option (RFC 9175 §2.4), and notifications and retransmissions stop. A client that repeats
    /// the request with the Echo, or acknowledges a CON, is verified for 60 s.
    #[arg(long)]
    no_echo: bool,
    /// UDP: bytes a source not verified yet may be sent beyond 3× what it sent, in each 60 s
    /// (one datagram by default: the small answers of clients that never answer Echo, such as
    /// aiocoap's and Californium's, go unchallenged).
    #[arg(long, value_name = "BYTES", default_value_t = 1152)]
    amplification_allowance: u32,
    /// UDP: sources not yet verified that the amplification limit keeps an account for at once
    /// (about 100 bytes each); when all are in use, a new source is held to 3× each request.
    #[arg(long, value_name = "N", default_value_t = 16384, value_parser = clap::value_parser!(u32).range(1..))]
    max_accounts: u32,
}

/// Runs `coapcc server`.
pub fn server(args: &ServerArgs) -> Result<(), Error> {
    let cc = CcConfig::parse(&args.cc)?;
    if args.tcp {
        return runtime()?.block_on(async {
            let cfg = coap_net::tcp::TcpServerConfig {
                max_connections: args.max_connections as usize,
                limits: {
                    let mut l = coap_net::tcp::server_limits(coap_cc::Duration::from_secs_f64(args.idle_timeout));
                    if args.no_deadlines {
                        (l.csm, l.frame) = (None, None);
                    }
                    l
                },
                max_per_source: args.max_per_source as usize,
                backlog: args.backlog,
            };
            let s = coap_net::tcp::serve_with(args.bind, cfg)
                .await
                .map_err(|e| format!("cannot serve on {}: {e}", args.bind))?;
            if s.max_connections < args.max_connections as usize {
                eprintln!(
                    "coapcc server: at most {} connections (the open-file limit leaves no more; raise `ulimit -n` for {})",
                    s.max_connections, args.max_connections
                );
            }
            eprintln!(
                "coapcc server: serving /test, /time, /echo, /.well-known/core over TCP on {} (Ctrl-C stops)",
                s.local
            );
            match args.duration {
                Some(d) => tokio::time::sleep(std::time::Duration::from_secs_f64(d)).await,
                None => ctrl_c().await,
            }
            let load = |a: &std::sync::atomic::AtomicU64| a.load(std::sync::atomic::Ordering::Relaxed);
            let (n, t) = (load(&s.stats.requests), &s.tcp_stats);
            eprintln!(
                "coapcc server: stopped after {n} requests; {} connections ({} refused at the per-source cap, {} evicted to make room, {} closed idle, {} aborted, {} failed accepts)",
                load(&t.accepted), load(&t.refused), load(&t.evicted), load(&t.idle_closed), load(&t.aborted), load(&t.accept_errors)
            );
            s.stop();
            Ok(())
        });
    }
    runtime()?.block_on(async {
        let mut cfg = coap_net::config(cc);
        cfg.dedup_bytes = usize::try_from(args.dedup_bytes).unwrap_or(usize::MAX);
        if args.no_echo {
            cfg.amplification_factor = None;
        }
        cfg.amplification_allowance = args.amplification_allowance as usize;
        cfg.max_accounts = args.max_accounts as usize;
        let (h, stats) = coap_net::server(args.bind, cfg, coap_net::os_seed())
            .await
            .map_err(|e| format!("cannot serve on {}: {e}", args.bind))?;
        eprintln!("coapcc server: serving /test, /time, /echo, /.well-known/core on {} (Ctrl-C stops)", h.local_addr());
        match args.duration {
            Some(d) => tokio::time::sleep(std::time::Duration::from_secs_f64(d)).await,
            None => ctrl_c().await,
        }
        let state = h.state().await;
        let _ = h.finish().await;
        let (challenges, withheld) = state.as_ref().map_or((0, 0), |s| (s.echo_challenges, s.amplification_withheld));
        eprintln!(
            "coapcc server: stopped after {} requests; amplification limit: {challenges} Echo challenges, {withheld} datagrams withheld",
            stats.requests.load(std::sync::atomic::Ordering::Relaxed)
        );
        if let Some(st) = state.filter(|s| s.dedup_early_evictions > 0) {
            eprintln!(
                "coapcc server: {} deduplication entries were evicted before EXCHANGE_LIFETIME to stay within --dedup-bytes {} (a duplicate of one ran its handler again): raise --dedup-bytes",
                st.dedup_early_evictions, args.dedup_bytes
            );
        }
        Ok(())
    })
}

/// Arguments of `coapcc client`. The short options are libcoap's `coap-client`'s.
#[derive(Debug, clap::Args)]
pub struct ClientArgs {
    /// The resource, e.g. coap://127.0.0.1/test (coap+tcp:// for CoAP over TCP).
    uri: String,
    /// Method, in any case.
    #[arg(short, long, default_value = "get", ignore_case = true, value_parser = ["get", "post", "put", "delete", "fetch"])]
    method: String,
    /// Request payload.
    #[arg(short = 'e', long, conflicts_with = "payload_file")]
    payload: Option<String>,
    /// Content-Format of the payload: a number, a media type (application/json) or a short name
    /// (text, link, xml, octet, exi, json, cbor).
    #[arg(short = 't', long, value_name = "FORMAT", value_parser = crate::dump::content_format)]
    content_format: Option<u16>,
    /// An option, NUM,VALUE: text, a number for an integer option, or hex bytes after 0x (e.g.
    /// `-O 15,a=1` adds Uri-Query a=1). Repeatable.
    #[arg(short = 'O', long = "option", value_name = "NUM,VALUE", value_parser = crate::dump::option)]
    options: Vec<(u16, Vec<u8>)>,
    /// Request payload: the bytes of this file.
    #[arg(short = 'f', long, value_name = "FILE")]
    payload_file: Option<PathBuf>,
    /// Block-wise transfer (RFC 7959; over TCP RFC 8323 §6) with blocks of SIZE bytes (16, 32, …,
    /// 1024): a larger payload goes in Block1 blocks, and responses are asked for in blocks of
    /// SIZE (as libcoap's -b).
    /// Without it a payload must fit one message; large responses still arrive whole.
    #[arg(short = 'b', long = "block-size", value_name = "SIZE", value_parser = block_size)]
    block_size: Option<usize>,
    /// Observe the resource (RFC 7641, as libcoap's -s) for SECONDS: print the response and
    /// then every notification, one per line, until then, the server's last notification, or
    /// Ctrl-C (which ends it normally). Over UDP and TCP (coap+tcp://, RFC 8323 §7).
    #[arg(short = 's', long = "observe", value_name = "SECONDS", value_parser = crate::args::positive_secs)]
    observe: Option<f64>,
    /// Send a Confirmable request (the default).
    #[arg(long, conflicts_with = "non")]
    con: bool,
    /// Send a Non-confirmable request.
    #[arg(short = 'N', long)]
    non: bool,
    /// Give up after this many seconds without the response (default: when the congestion
    /// control's retransmissions are exhausted).
    #[arg(short = 'B', long = "wait", value_name = "SECONDS", value_parser = crate::args::positive_secs)]
    wait: Option<f64>,
    /// Congestion control, NAME[:key=value,...] (default: `default` for coap://; a coap+tcp:// URI
    /// runs over TCP, `tcp`).
    #[arg(long = "cc")]
    cc: Option<String>,
    /// Verbosity on stderr: 1 logs each transmission with its RTO and the response's RTT; 2 and
    /// above also every datagram sent and received (type, Message ID, token, options, payload).
    #[arg(short, long, value_name = "LEVEL", default_value_t = 0, value_parser = clap::value_parser!(u8).range(0..=9))]
    verbose: u8,
    /// Seed of the endpoint's RNG (Message IDs, tokens, RTO dither); default: from the OS.
    #[arg(long, value_parser = crate::args::seed, allow_negative_numbers = true)]
    seed: Option<u64>,
    /// Write the response's payload into FILE (as libcoap's -o) instead of stdout; with
    /// --observe, each notification's payload after the last (a line each).
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    output: Option<PathBuf>,
    /// Add a newline after the payload (as libcoap's -w). The payload is written as it is, byte
    /// for byte; only on a terminal is a newline added after a text that has none.
    #[arg(short = 'w', long = "newline")]
    newline: bool,
}

impl ClientArgs {
    /// Writes a response's payload where the options say, as they say.
    fn emit(&self, payload: &[u8]) -> Result<(), Error> {
        use std::io::IsTerminal;
        match &self.output {
            Some(path) => {
                let mut bytes = payload.to_vec();
                if self.newline {
                    bytes.push(b'\n');
                }
                std::fs::write(path, bytes).map_err(|e| format!("cannot write {}: {e}", path.display()).into())
            }
            None => {
                let terminal = std::io::stdout().is_terminal()
                    && !payload.is_empty()
                    && !payload.ends_with(b"\n")
                    && std::str::from_utf8(payload).is_ok();
                Ok(crate::stdout::write_bytes(payload, self.newline || terminal)?)
            }
        }
    }
}

/// A block size: a power of two from 16 to 1024.
fn block_size(s: &str) -> Result<usize, String> {
    s.parse::<usize>()
        .ok()
        .filter(|&v| coap_endpoint::Block::szx_of(v).is_some())
        .ok_or_else(|| format!("'{s}' is not a block size (16, 32, 64, 128, 256, 512 or 1024)"))
}

/// The largest response body `client` accepts from a block-wise download.
const CLIENT_MAX_BODY: usize = 16 << 20;

/// Runs `coapcc client`.
pub fn client(args: &ClientArgs) -> Result<(), Error> {
    runtime()?.block_on(async {
        let uri = lab::uri::parse(&args.uri).await?;
        // over TCP the UDP endpoint below is not used
        let cc = match lab::load::transport(&uri, &args.uri, args.cc.as_deref()).map_err(|e| e as Error)? {
            Some(cc) => cc,
            None => CcConfig::parse("default")?,
        };
        let bind: SocketAddr = if uri.addr.is_ipv4() { ([0, 0, 0, 0], 0).into() } else { ([0u16; 8], 0).into() };
        let verbose = args.verbose;
        let transmissions: Option<coap_net::LogFn> = (verbose >= 1).then(|| {
            // each block, and a request repeated with the server's Echo, is an exchange of its own
            // whose transmissions count from 0: the line names the exchange (1, 2, …)
            let mut exchange = 0u32;
            Box::new(move |t: coap_net::TransmissionLog| {
                let rto = t.rto.map_or("none (NON)".into(), |r| format!("{:.3} s", r.as_secs_f64()));
                if t.number == 0 {
                    exchange += 1;
                }
                let what = match t.number {
                    0 => "first transmission".to_string(),
                    n => format!("retransmission {n}"),
                };
                eprintln!("coapcc: exchange {exchange}, {what} at {:.3} s, RTO {rto}", t.at.as_nanos() as f64 / 1e9);
            }) as coap_net::LogFn
        });
        let datagrams: Option<coap_net::DatagramLogFn> = (verbose >= 2).then(|| {
            Box::new(|dir: coap_net::Direction, peer: SocketAddr, bytes: &[u8]| {
                let way = if dir == coap_net::Direction::Sent { "sent to" } else { "received from" };
                eprintln!("coapcc: {way} {peer}: {}", crate::dump::describe(bytes));
            }) as coap_net::DatagramLogFn
        });
        // a socket connected to the server, so that an ICMP port unreachable is reported
        let opts = coap_net::ClientOptions {
            connect: Some(uri.addr),
            logs: coap_net::Logs { transmissions, datagrams, retired: None },
        };
        let h = coap_net::client_with(bind, cc, args.seed.unwrap_or_else(coap_net::os_seed), opts).await?;
        let code = match args.method.to_ascii_lowercase().as_str() {
            "post" => Code::POST,
            "put" => Code::PUT,
            "delete" => Code::DELETE,
            "fetch" => Code::FETCH,
            _ => Code::GET,
        };
        let payload = match &args.payload_file {
            Some(p) => std::fs::read(p).map_err(|e| format!("cannot read {}: {e}", p.display()))?,
            None => args.payload.clone().unwrap_or_default().into_bytes(),
        };
        let mut options = uri.options.clone();
        if let Some(cf) = args.content_format {
            let mut buf = [0u8; 4];
            options.push((coap_wire::registry::CONTENT_FORMAT, coap_wire::encode_uint(cf.into(), &mut buf).to_vec()));
        }
        options.extend(args.options.iter().cloned());
        let req = Request { code, options, payload, confirmable: !args.non };
        let wait = async {
            match args.wait {
                Some(s) => tokio::time::sleep(std::time::Duration::from_secs_f64(s)).await,
                None => std::future::pending().await,
            }
        };
        let gave_up = || format!("{}: no response within {} s (-B)", args.uri, args.wait.unwrap_or_default());
        if let Some(secs) = args.observe {
            let at = if uri.tcp {
                let conn = coap_net::tcp::connect(uri.addr).await.map_err(|e| format!("{}: {e}", args.uri))?;
                Observed::Tcp(conn)
            } else {
                Observed::Udp(&h, uri.addr)
            };
            return observe(at, req, secs, args).await;
        }
        let reply = if uri.tcp {
            let connect = coap_net::tcp::connect(uri.addr);
            tokio::pin!(wait);
            let conn = tokio::select! {
                c = connect => c.map_err(|e| format!("{}: {e}", args.uri))?,
                _ = &mut wait => return Err(gave_up().into()),
                _ = ctrl_c() => return Err(interrupted(&args.uri)),
            };
            let r = tokio::select! {
                r = conn.transfer(req, args.block_size, CLIENT_MAX_BODY) => r.map_err(|e| format!("{}: {e}", args.uri))?,
                _ = &mut wait => return Err(gave_up().into()),
                _ = ctrl_c() => return Err(interrupted(&args.uri)),
            };
            conn.release().await;
            r
        } else {
            tokio::select! {
                r = h.transfer(uri.addr, req, args.block_size, CLIENT_MAX_BODY) => r.map_err(|e| format!("{}: {e}", args.uri))?,
                _ = wait => return Err(gave_up().into()),
                _ = ctrl_c() => return Err(interrupted(&args.uri)),
            }
        };
        if verbose >= 1 {
            eprintln!(
                "coapcc: response {} after {:.3} ms, {} transmission(s)",
                reply.code,
                reply.rtt.as_secs_f64() * 1e3,
                reply.transmissions
            );
        }
        if !reply.payload.is_empty() || args.output.is_some() {
            args.emit(&reply.payload)?;
        }
        if reply.code.class() != 2 {
            return Err(format!("{} answered {}", args.uri, reply.code).into());
        }
        Ok(())
    })
}

/// Where `client --observe` observes: over UDP, a server through our endpoint; over TCP, a
/// connection.
enum Observed<'a> {
    Udp(&'a coap_net::EndpointHandle, SocketAddr),
    Tcp(coap_net::tcp::TcpClient),
}

type Notifications = tokio::sync::mpsc::Receiver<Result<coap_net::Reply, coap_net::RequestFailure>>;

impl Observed<'_> {
    async fn register(&self, req: Request) -> Result<Notifications, coap_net::RequestFailure> {
        match self {
            Observed::Udp(h, server) => h.observe(*server, req).await,
            Observed::Tcp(conn) => conn.observe(req).await,
        }
    }

    /// Tells the server the observation is over: over UDP the request again with Observe 1
    /// (RFC 7641 §3.6), at most 5 s for its answer, as libcoap does; over TCP by releasing the
    /// connection, which ends its observations (RFC 8323 §7.4).
    async fn end(self, req: Request, verbose: u8) {
        match self {
            Observed::Udp(h, server) => {
                let bye = tokio::time::timeout(std::time::Duration::from_secs(5), h.deregister(server, req));
                match bye.await {
                    Ok(Ok(reply)) if verbose >= 1 => eprintln!("coapcc: deregistered: {}", reply.code),
                    Ok(Err(e)) if verbose >= 1 => eprintln!("coapcc: deregistration: {e}"),
                    Err(_) if verbose >= 1 => eprintln!("coapcc: deregistration: no answer within 5 s"),
                    _ => {}
                }
            }
            Observed::Tcp(conn) => {
                conn.release().await;
                if verbose >= 1 {
                    eprintln!("coapcc: released the connection (its observations end)");
                }
            }
        }
    }
}

/// `client --observe`: the response and every notification, a line each, for `secs` seconds.
async fn observe(at: Observed<'_>, mut req: Request, secs: f64, args: &ClientArgs) -> Result<(), Error> {
    let (uri, verbose) = (args.uri.as_str(), args.verbose);
    let mut rx = at.register(req.clone()).await.map_err(|e| format!("{uri}: {e}"))?;
    let until = tokio::time::sleep(std::time::Duration::from_secs_f64(secs));
    tokio::pin!(until);
    let mut first = true;
    loop {
        tokio::select! {
            r = rx.recv() => match r {
                Some(Ok(reply)) => {
                    let echo = reply.options.iter().find(|o| o.0 == coap_wire::registry::ECHO);
                    if let (true, Code::UNAUTHORIZED, Some(echo)) = (first, reply.code, echo) {
                        // the server's amplification mitigation (RFC 9175): ask again with its Echo
                        req.options.push(echo.clone());
                        rx = at.register(req.clone()).await.map_err(|e| format!("{uri}: {e}"))?;
                        continue;
                    }
                    let seq = reply.options.iter().find(|o| o.0 == coap_wire::registry::OBSERVE);
                    if verbose >= 1 {
                        let seq = seq.and_then(|o| coap_endpoint::observe::value(&o.1));
                        eprintln!("coapcc: {} {} (Observe {})", if first { "response" } else { "notification" }, reply.code,
                            seq.map_or("none: the observation ends".into(), |v| v.to_string()));
                    }
                    match &args.output {
                        // the file holds the latest payload
                        Some(_) => args.emit(&reply.payload)?,
                        None => crate::stdout::write_line(&reply.payload)?,
                    }
                    if reply.code.class() != 2 {
                        return Err(format!("{uri} answered {}", reply.code).into());
                    }
                    if first && seq.is_none() {
                        eprintln!("coapcc: {uri} is not observable (its response has no Observe option)");
                        return Ok(());
                    }
                    first = false;
                }
                Some(Err(e)) => return Err(format!("{uri}: {e}").into()),
                None => return Ok(()), // the server ended the observation
            },
            _ = &mut until => break,
            _ = ctrl_c() => break,
        }
    }
    // time is up: tell the server
    at.end(req, verbose).await;
    Ok(())
}

/// `client`'s Ctrl-C: its exchange did not end.
fn interrupted(uri: &str) -> Error {
    Box::new(crate::Incomplete(format!("interrupted with 1 exchange in flight to {uri}")))
}

/// Arguments of `coapcc load`.
#[derive(Debug, clap::Args)]
pub struct LoadArgs {
    /// The resource every exchange requests (GET), e.g. coap://127.0.0.1/test.
    #[arg(long)]
    server: String,
    /// Concurrent clients, each with its own socket, endpoint and controller.
    #[arg(long, default_value_t = 10, value_parser = crate::args::count, allow_negative_numbers = true)]
    clients: u32,
    /// Exchanges per client.
    #[arg(long, default_value_t = 50, value_parser = crate::args::count, allow_negative_numbers = true)]
    exchanges: u32,
    /// continuous: the next request when the previous ends; random: batches of 1..10 with all CC state reset between them.
    #[arg(long, default_value = "continuous", value_parser = ["continuous", "random"])]
    workload: String,
    /// Congestion control, NAME[:key=value,...] (default: `default`). The URI's scheme chooses the
    /// transport: coap+tcp:// runs CoAP over TCP (RFC 8323), where `tcp` is the only choice.
    #[arg(long = "cc")]
    cc: Option<String>,
    /// Seed of the clients' RNGs (default: from the OS).
    #[arg(long, value_parser = crate::args::seed, allow_negative_numbers = true)]
    seed: Option<u64>,
    /// Local address for the clients' sockets (HOST:PORT).
    #[arg(long, default_value = "0.0.0.0:0", value_parser = crate::args::socket_addr)]
    bind: SocketAddr,
    /// One source address per client: client i binds the i-th address after --bind's (client 0
    /// --bind's own), as `coapcc emulate` tells its clients apart (10.201.0.1 and on there).
    #[arg(long)]
    bind_each: bool,
    /// CoAP over TCP: no application deadlines (by default the server's CSM and each frame must
    /// come within 10 s and each response within 120 s); a connection then lasts as long as TCP
    /// keeps it, as in the simulator.
    #[arg(long)]
    no_deadlines: bool,
    /// Print one JSON object (the fields of `coapcc sim --json` that apply).
    #[arg(long)]
    json: bool,
}

/// Runs `coapcc load`.
pub fn load(args: &LoadArgs) -> Result<(), Error> {
    let req = lab::load::Request {
        server: args.server.clone(),
        clients: args.clients,
        exchanges: args.exchanges,
        workload: if args.workload == "random" { WorkloadKind::Random } else { WorkloadKind::Continuous },
        cc: args.cc.clone(),
        seed: args.seed,
        bind: args.bind,
        bind_each: args.bind_each,
        deadlines: !args.no_deadlines,
    };
    runtime()?.block_on(async {
        let outcome = lab::load::run(&req, ctrl_c()).await.map_err(|e| e as Error)?;
        let (result, wall_s) = (&outcome.result, outcome.wall_s);
        if result.echo_challenges > 0 {
            eprintln!(
                "coapcc load: the server challenged {} new source(s) with Echo (RFC 9175); each repeated its first request with the Echo, and the challenged exchange is left out of the statistics (start the server with --no-echo to avoid them)",
                result.echo_challenges
            );
        }
        if result.early_retirements > 0 {
            eprintln!(
                "coapcc load: {} finished exchanges were forgotten before EXCHANGE_LIFETIME (each client keeps its last {}, to bound memory): duplicate responses to them arriving later were not counted",
                result.early_retirements,
                coap_net::MAX_FINISHED
            );
        }
        let (s, requests) = (&outcome.summary, outcome.requests());
        if args.json {
            let v = outcome.to_json(&req);
            crate::stdout::json(&v)?;
        } else {
            let name = outcome.stack();
            crate::stdout::write(&format!(
                "{} clients × {} exchanges against {} with {name}\n\
                 FCT s: p10 {:.3}  median {:.3}  p90 {:.3}  max {:.3}\n\
                 exchanges {} (failed {}), retransmissions per exchange {:.3}, median duplicates per client {}\n\
                 {requests} requests in {wall_s:.2} s ({:.0} requests/s)\n",
                args.clients,
                args.exchanges,
                args.server,
                s.fct_s.p10,
                s.fct_s.p50,
                s.fct_s.p90,
                s.fct_s.max,
                s.exchanges,
                s.failed_exchanges,
                (requests - s.exchanges) as f64 / s.exchanges.max(1) as f64,
                s.unnecessary_retx_per_client.p50,
                requests as f64 / wall_s.max(1e-9)
            ))?;
        }
        if result.interrupted {
            let msg = format!(
                "interrupted with {} exchange(s) in flight; the figures cover the {} exchange(s) that ended",
                result.in_flight, s.exchanges
            );
            return Err(Box::new(crate::Incomplete(msg)) as Error);
        }
        if s.exchanges > 0 && s.failed_exchanges == s.exchanges {
            let refused: u64 = result.clients.iter().map(|c| c.refused).sum();
            let why = if refused == s.exchanges {
                format!("{} refused each with 4.01 Unauthorized, also after the repeat with its Echo", args.server)
            } else {
                format!("no answer from {}", args.server)
            };
            let msg = format!("every exchange ({}) failed: {why}", s.exchanges);
            return Err(Box::new(crate::Incomplete(msg)) as Error);
        }
        Ok(())
    })
}

/// The wired bottleneck's overrides on the command lines of `relay` and `emulate`.
#[derive(Debug, clap::Args)]
pub(crate) struct LinkOverrides {
    /// The wired bottleneck's buffer of both directions, bytes (or `infinite`).
    #[arg(long, value_parser = crate::sim::parse_buffer, allow_negative_numbers = true)]
    pub(crate) buffer: Option<u64>,
    /// The wired bottleneck's link-error profile of both directions.
    #[arg(long, value_parser = ["none", "low", "medium", "high"])]
    pub(crate) errors: Option<String>,
    /// Seed of the model's draws (the bottleneck's losses and jitter, a mesh's radio).
    #[arg(long, value_parser = crate::args::seed, allow_negative_numbers = true)]
    pub(crate) seed: Option<u64>,
}

/// Arguments of `coapcc relay`.
#[derive(Debug, clap::Args)]
pub struct RelayArgs {
    /// Address the clients send to (HOST:PORT).
    #[arg(long, value_parser = crate::args::socket_addr)]
    listen: SocketAddr,
    /// The server's address (HOST:PORT).
    #[arg(long, value_parser = crate::args::socket_addr)]
    upstream: SocketAddr,
    /// A scenario file (the simulator's): the wired bottleneck's links, buffers, hop jitter and
    /// error models (default: the `thesis` preset); or a mesh's (`env = "lln"`), whose first
    /// server's client motes the client addresses take in turn (at most that many at once; a mote
    /// is free again when its mapping expires).
    #[arg(long, value_name = "FILE", conflicts_with = "preset")]
    scenario: Option<PathBuf>,
    /// A named preset instead of --scenario (`coapcc presets`), e.g. rttcoap-homog-57.
    #[arg(long, value_name = "NAME")]
    preset: Option<String>,
    #[command(flatten)]
    link: LinkOverrides,
    /// Stop after this many seconds (default: run until Ctrl-C).
    #[arg(long, value_name = "SECS", value_parser = crate::args::positive_secs, allow_negative_numbers = true)]
    duration: Option<f64>,
    /// Client addresses mapped at once (one upstream socket each); datagrams from further ones are
    /// dropped. Lowered to what the open-file limit (`ulimit -n`) leaves.
    #[arg(long, value_name = "N", default_value_t = 4096, value_parser = clap::value_parser!(u32).range(1..))]
    max_clients: u32,
    /// A client mapping with no datagram either way for this many seconds expires, freeing its slot.
    #[arg(long, value_name = "SECS", default_value_t = 60.0, value_parser = crate::args::positive_secs, allow_negative_numbers = true)]
    mapping_timeout: f64,
}

/// The network of `relay` and `emulate`, live: the scenario a file or a preset describes (by
/// default the `thesis` preset), with --buffer, --errors and --seed written over it as a sweep
/// plan's keys are, read by its world ([`netsim::worlds`]) and made live; with the label errors
/// name it by.
pub(crate) fn emulation(
    path: Option<&std::path::Path>,
    preset: Option<&str>,
    link: &LinkOverrides,
) -> Result<(String, netsim::emulation::Emulation), Error> {
    let text = lab::sim::scenario_text(preset, path)?;
    let label = text.as_ref().map_or_else(|| "preset thesis".to_string(), |t| t.1.clone());
    let world =
        netsim::worlds::of_text(text.as_ref().map_or("", |t| t.0.as_str())).map_err(|e| format!("{label}: {e}"))?;
    let overrides = [
        ("--buffer", "uplink", link.buffer.map(|b| format!("buffer={b}"))),
        ("--errors", "errors", link.errors.as_ref().map(|e| format!("errors=\"{e}\""))),
        ("--seed", "seed", link.seed.map(|s| format!("seed={s}"))),
    ];
    let defaults = world.defaults();
    let mut settings = Vec::new();
    for (option, key, set) in overrides {
        let Some(set) = set else { continue };
        if !defaults.contains_key(key) {
            return Err(crate::usage(format!("{option}: {label} is a {} scenario, which sets its own", world.title())));
        }
        settings.push(set);
    }
    let text = lab::sim::with_settings(text, &settings)?.map_or_else(String::new, |t| t.0);
    let scenario = netsim::worlds::read(&text).map_err(|e| format!("{label}: {e}"))?;
    let emulation = scenario.emulation().map_err(|e| format!("{label}: {e}"))?;
    Ok((label, emulation))
}

/// Runs `coapcc relay`.
pub fn relay(args: &RelayArgs) -> Result<(), Error> {
    let (_, live) = emulation(args.scenario.as_deref(), args.preset.as_deref(), &args.link)?;
    let hosts = coap_net::relay::RelayHosts { server: live.server, clients: live.clients, overhead: live.udp_headers };
    let mut medium = live.medium;
    runtime()?.block_on(async {
        eprintln!("coapcc relay: {} -> {}: {} (Ctrl-C stops)", args.listen, args.upstream, live.banner);
        let duration = args.duration;
        let stop = async move {
            match duration {
                Some(d) => tokio::time::sleep(std::time::Duration::from_secs_f64(d)).await,
                None => ctrl_c().await,
            }
        };
        let cfg = coap_net::relay::RelayConfig {
            max_clients: args.max_clients as usize,
            mapping_timeout: std::time::Duration::from_secs_f64(args.mapping_timeout),
            log: Some(Box::new(|line: &str| eprintln!("coapcc relay: {line}"))),
        };
        let st = coap_net::relay::run_live(args.listen, args.upstream, &mut *medium, hosts, cfg, stop).await?;
        if st.max_clients < args.max_clients as usize {
            eprintln!(
                "coapcc relay: mapped at most {} clients at once (the model's client hosts or the open-file limit left no more; `ulimit -n` raises the latter for {})",
                st.max_clients, args.max_clients
            );
        }
        eprintln!(
            "coapcc relay: {} clients mapped, {} mappings expired; datagrams from new sources dropped: {} (table full), {} (no socket); {} late for an expired mapping; {}",
            st.clients, st.expired, st.unmapped_drops, st.socket_errors, st.late_drops, medium.report_line()
        );
        Ok(())
    })
}
