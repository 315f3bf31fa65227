//! What `coapcc emulate` and `coapcc relay` ask a scenario's world for
//! ([`crate::worlds::WorldScenario::emulation`]): its model live between real hosts
//! ([`netmodel::live`]), where the server and the clients sit in it, how it sizes packets, the
//! kernels' TCP it describes, and what to tell the user. The emulator, the relay and the command
//! line know no world: a world that gives an [`Emulation`] is emulated, one that does not says why.
//!
//! The two built in: the wired bottleneck (server host 0, client `i` host `i + 1`, any number of
//! them; IP sizes; its `[tcp]` for the kernels) and the mesh (its first client's server and the
//! clients of that server, in the scenario's order; UDP payload sizes; UDP only).

pub use netmodel::live::ClientHosts;
use netmodel::live::{Driven, Live, Size};
use netmodel::{HostId, Medium};
use serde::Serialize;

use crate::scenario::spelled;
use crate::tcp::TcpParams;

/// A scenario as the IP-level emulator and the relay run it.
pub struct Emulation {
    /// The model, live.
    pub medium: Box<dyn LiveMedium>,
    /// The server's host.
    pub server: HostId,
    /// The hosts the clients are.
    pub clients: ClientHosts,
    /// Clients when the user gives no number (the scenario's).
    pub default_clients: u32,
    /// What the model is told a packet's size is.
    pub size: Size,
    /// Header bytes the model counts on top of a UDP payload (IP + UDP; 0 where the model adds
    /// its own): what a relay, which sees payloads only, adds.
    pub udp_headers: u32,
    /// The devices' MTU, bytes.
    pub mtu: u32,
    /// The kernels' TCP the scenario describes (`None`: the world carries UDP only).
    pub tcp: Option<TcpParams>,
    /// The network, for the user: a line (or two).
    pub banner: String,
    /// The scenario, as the emulation's report records it.
    pub scenario: serde_json::Value,
}

impl std::fmt::Debug for Emulation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Emulation")
            .field("server", &self.server)
            .field("clients", &self.clients)
            .field("default_clients", &self.default_clients)
            .field("size", &self.size)
            .field("mtu", &self.mtu)
            .field("banner", &self.banner)
            .finish_non_exhaustive()
    }
}

/// A live model whose counters can be reported: what an [`Emulation`] holds.
pub trait LiveMedium: Live {
    /// The model's counters, as the emulation's report records them.
    fn report(&self) -> serde_json::Value;
    /// The counters in a line, for the user at the end.
    fn report_line(&self) -> String;
}

/// A model's report, in a line for the end of an emulation.
pub trait ReportLine {
    /// The line.
    fn report_line(&self) -> String;
}

impl<M: Medium + Send> LiveMedium for Driven<M>
where
    M::Event: Send,
    M::Report: Serialize + ReportLine,
{
    fn report(&self) -> serde_json::Value {
        serde_json::to_value(Driven::report(self)).unwrap_or(serde_json::Value::Null)
    }
    fn report_line(&self) -> String {
        Driven::report(self).report_line()
    }
}

impl ReportLine for netmodel::BottleneckReport {
    fn report_line(&self) -> String {
        let (up, down) = (self.uplink, self.downlink);
        format!(
            "up {} packets ({} buffer drops, {} error drops), down {} packets ({} buffer drops, {} error drops)",
            up.offered, up.buffer_drops, up.error_drops, down.offered, down.buffer_drops, down.error_drops
        )
    }
}

impl ReportLine for netmodel::mesh::MeshReport {
    fn report_line(&self) -> String {
        format!("{} motes reported", self.nodes.len())
    }
}

/// The wired bottleneck of a resolved scenario, live: the server is host 0, client `i` host
/// `i + 1`; the scenario's `[tcp]` (Linux's defaults without one) for the kernels.
pub(crate) fn bottleneck(s: &crate::Scenario) -> Emulation {
    let tcp = s.tcp.clone().unwrap_or_default();
    let mtu = s.uplink.mtu.min(s.downlink.mtu);
    let banner = format!(
        "up {} bit/s {} ms, down {} bit/s {} ms, buffers {}/{} B, MTU {mtu}, errors {}",
        s.uplink.rate_bps,
        s.uplink.delay_ms,
        s.downlink.rate_bps,
        s.downlink.delay_ms,
        s.uplink.buffer_bytes,
        s.downlink.buffer_bytes,
        spelled(&s.errors)
    );
    let scenario = serde_json::json!({
        "network": "bottleneck",
        "uplink": s.uplink, "downlink": s.downlink, "server_hop": s.server_hop,
        "errors": spelled(&s.errors), "seed": s.seed,
    });
    let medium = netmodel::Bottleneck::new(&s.bottleneck(), HostId(0), s.seed, 0);
    Emulation {
        medium: Box::new(Driven::new(medium)),
        server: HostId(0),
        clients: ClientHosts::Numbered { first: 1 },
        default_clients: s.clients,
        size: Size::Ip,
        udp_headers: s.ip_header_bytes + s.udp_header_bytes,
        mtu,
        tcp: Some(tcp),
        banner,
        scenario,
    }
}

/// A resolved mesh, live: its first client's server and that server's clients (or cloud hosts),
/// in the scenario's order (a mesh with several servers keeps the others' clients out: the
/// emulator joins one server's namespace); UDP only.
pub(crate) fn mesh(s: &crate::mesh::MeshScenario, res: &crate::mesh::Resolved) -> Result<Emulation, String> {
    let Some(&(_, server)) = res.clients.first() else {
        return Err("no clients".into());
    };
    let own: Vec<HostId> = res.clients.iter().filter(|c| c.1 == server).map(|c| HostId(c.0)).collect();
    let left_out = res.clients.len() - own.len();
    let motes = res.mesh.nodes.len() as u32;
    let place = |h: u32| if h >= motes { format!("cloud host {h}") } else { format!("mote {}", h + 1) };
    let others = if left_out > 0 { format!(" ({left_out} clients of other servers left out)") } else { String::new() };
    let banner = format!(
        "mesh {}: {motes} motes; the server is {}, the clients {}{others}; UDP only (the mesh carries CoAP over 6LoWPAN)",
        s.name,
        place(server),
        own.iter().map(|h| place(h.0)).collect::<Vec<_>>().join(", ")
    );
    let scenario = serde_json::json!({ "network": "mesh", "name": s.name, "seed": s.seed, "server_host": server });
    Ok(Emulation {
        medium: Box::new(Driven::new(netmodel::mesh::Mesh::new(res.mesh.clone(), s.seed, 0))),
        server: HostId(server),
        default_clients: own.len() as u32,
        clients: ClientHosts::Listed(own),
        size: Size::UdpPayload,
        udp_headers: 0,
        mtu: 1280,
        tcp: None,
        banner,
        scenario,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::worlds;

    fn emulation(text: &str) -> Emulation {
        let table: toml::Table = text.parse().unwrap();
        worlds::of(&table).unwrap().scenario(table).unwrap().emulation().unwrap()
    }

    #[test]
    fn the_bottleneck_numbers_its_clients_after_the_server() {
        let e = emulation("clients = 7\n[uplink]\nbuffer_bytes = 2500\nmtu = 200\n");
        assert_eq!(
            (e.server, e.default_clients, e.size, e.mtu),
            (HostId(0), 7, Size::Ip, 200),
            "the smaller MTU (the downlink's is 296)"
        );
        assert_eq!(e.clients.first(3), Ok(vec![HostId(1), HostId(2), HostId(3)]));
        assert!(e.banner.contains("buffers 2500/"), "{}", e.banner);
        assert_eq!(e.scenario["network"], "bottleneck");
        assert!(e.tcp.is_some());
    }

    #[test]
    fn a_mesh_offers_its_first_servers_clients_and_no_more() {
        let e = emulation(crate::mesh::presets::text("nitk-cocoapp-grid6x6").expect("the preset exists"));
        assert_eq!(e.size, Size::UdpPayload);
        assert!(e.tcp.is_none());
        let all = e.clients.first(e.default_clients).unwrap();
        assert!(!all.contains(&e.server));
        assert_eq!(e.clients.first(e.default_clients + 1), Err(all.len()));
        assert_eq!(e.scenario["network"], "mesh");
    }
}
