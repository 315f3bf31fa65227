//! What a frame on the mesh's air carries, decoded from the model's own notes: the typed record a
//! capture writes bytes from ([`crate::medium::AirFrame`] is the generic part the driver sees).
//!
//! The mesh keeps a data packet's RPL hop-by-hop option and a control packet's fields in the
//! packet's `note` (see [`super::rpl`] and the mesh's neighbour discovery); [`OnAir::of`] reads them back, so no
//! module outside the mesh knows their layout.

use super::frame::{External, HopPlace};
use super::nd::{KIND_NA, KIND_NS};
use super::rpl::{decode, is_control, Msg, BROADCAST, HBH_DOWN, HBH_RANK_ERR};
use crate::medium::{AirFrame, Packet};

/// A data packet's RPL option (RFC 6553) as the sender put it on this hop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RplOption {
    /// Going down the DODAG (the `O` flag).
    pub down: bool,
    /// A rank error was signalled on the way (the `R` flag).
    pub rank_error: bool,
    /// The sender's rank as the model keeps it (0 where it keeps none: a converged tree).
    pub sender_rank: u16,
}

/// What a frame carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OnAir {
    /// One hop of a datagram of the driver's (CoAP over UDP): where on its path the hop is,
    /// and the RPL option it carries.
    Data {
        /// The hop's place, which sets its IPHC compression.
        hop: HopPlace,
        /// The hop-by-hop option's fields.
        rpl: RplOption,
    },
    /// A DIO with its DTSN and the sender's rank.
    Dio {
        /// Destination advertisement trigger sequence number.
        dtsn: u8,
        /// The sender's rank.
        rank: u16,
    },
    /// A DAO for `target` (a node index), or a No-Path DAO withdrawing it.
    Dao {
        /// The node whose route it advertises.
        target: u16,
        /// A No-Path DAO (lifetime 0).
        no_path: bool,
    },
    /// A DIS.
    Dis,
    /// A neighbour solicitation for `target`'s address (multicast to its solicited-node
    /// address when the frame is a broadcast).
    Ns {
        /// The node whose link address is sought.
        target: u16,
    },
    /// A neighbour advertisement of `target`'s address (the sender's own).
    Na {
        /// The node advertised.
        target: u16,
    },
    /// A link-layer acknowledgement.
    Ack,
}

impl HopPlace {
    /// The hop of `p` from node `sender` to node `receiver` in a mesh of `motes` motes (hosts
    /// from `motes` on are outside it, behind the border router).
    pub fn of(p: &Packet, sender: usize, receiver: usize, motes: usize) -> HopPlace {
        let external = if p.from.index() >= motes {
            External::Source
        } else if p.to.index() >= motes {
            External::Destination
        } else {
            External::None
        };
        HopPlace { originated: p.from.index() == sender, last: p.to.index() == receiver, external }
    }
}

impl OnAir {
    /// What `frame` carries in a mesh of `motes` motes.
    pub fn of(frame: &AirFrame, motes: usize) -> OnAir {
        let p = &frame.packet;
        if frame.ack {
            return OnAir::Ack;
        }
        if !is_control(p) {
            let receiver = frame.receiver.map_or(usize::MAX, usize::from);
            let rpl = RplOption {
                down: p.note & HBH_DOWN != 0,
                rank_error: p.note & HBH_RANK_ERR != 0,
                sender_rank: (p.note & 0xFFFF) as u16,
            };
            return OnAir::Data { hop: HopPlace::of(p, frame.sender as usize, receiver, motes), rpl };
        }
        match p.note & 0xFF {
            KIND_NS => return OnAir::Ns { target: (p.note >> 8) as u16 },
            KIND_NA => return OnAir::Na { target: (p.note >> 8) as u16 },
            _ => {}
        }
        match decode(p.note) {
            (Msg::Dio, dtsn, rank, _) => OnAir::Dio { dtsn: dtsn as u8, rank: rank as u16 },
            (Msg::Dao, target, no_path, _) => OnAir::Dao { target: target as u16, no_path: no_path != 0 },
            (Msg::Dis, ..) => OnAir::Dis,
        }
    }
}

/// The receiver of a frame to `dest` as an [`AirFrame`] names it.
pub(super) fn receiver(dest: u16) -> Option<u16> {
    (dest != BROADCAST).then_some(dest)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::medium::PacketId;
    use crate::HostId;
    use coap_time::Instant;

    fn frame(packet: Packet, sender: u16, receiver: Option<u16>) -> AirFrame {
        AirFrame { at: Instant::ZERO, sender, receiver, ack: false, mpdu: 0, packet }
    }

    /// A datagram from mote 0 to mote 2 through mote 1, and one from a cloud host (host 5 of a
    /// 3-mote mesh) entering at the border router.
    #[test]
    fn a_data_hop_knows_its_place_and_its_rpl_option() {
        let p = Packet { id: PacketId(7), from: HostId(0), to: HostId(2), size: 15, note: HBH_DOWN | 1 << 16 | 512 };
        let first = OnAir::of(&frame(p, 0, Some(1)), 3);
        let rpl = RplOption { down: true, rank_error: false, sender_rank: 512 };
        assert_eq!(first, OnAir::Data { hop: HopPlace::local(true, false), rpl });
        assert_eq!(OnAir::of(&frame(p, 1, Some(2)), 3), OnAir::Data { hop: HopPlace::local(false, true), rpl });
        let inbound = Packet { from: HostId(5), note: HBH_RANK_ERR, ..p };
        let OnAir::Data { hop, rpl } = OnAir::of(&frame(inbound, 1, Some(2)), 3) else { panic!() };
        assert_eq!((hop.external, hop.originated, hop.last), (External::Source, false, true));
        assert!(rpl.rank_error && !rpl.down);
    }

    /// Control packets read back what the mesh put in their notes.
    #[test]
    fn control_frames_read_back_their_fields() {
        let control =
            |note| Packet { id: super::super::rpl::CONTROL_ID, from: HostId(1), to: HostId(0), size: 0, note };
        // DIO: kind 1, DTSN 3, rank 768
        assert_eq!(OnAir::of(&frame(control(1 | 3 << 8 | 768 << 24), 1, None), 4), OnAir::Dio { dtsn: 3, rank: 768 });
        // DAO: kind 2, target 2, No-Path
        let dao = OnAir::of(&frame(control(2 | 2 << 8 | 1 << 24), 1, Some(0)), 4);
        assert_eq!(dao, OnAir::Dao { target: 2, no_path: true });
        assert_eq!(OnAir::of(&frame(control(3), 1, None), 4), OnAir::Dis);
        assert_eq!(OnAir::of(&frame(control(KIND_NS | 3 << 8), 1, None), 4), OnAir::Ns { target: 3 });
        assert_eq!(OnAir::of(&frame(control(KIND_NA | 1 << 8), 1, Some(0)), 4), OnAir::Na { target: 1 });
        let ack = AirFrame { ack: true, ..frame(control(0), 1, Some(0)) };
        assert_eq!(OnAir::of(&ack, 4), OnAir::Ack);
    }
}
