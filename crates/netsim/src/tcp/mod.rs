//! A TCP endpoint for the simulator's CoAP-over-TCP runs: Linux's TCP as the reference testbed
//! ran it (Debian 9's Linux 4.9: NewReno, no timestamps, no Fast Open, no metrics cache, SYN and
//! SYN/ACK retries 40, delayed ACK on a constant 200 ms timer, Nagle on, RTO
//! within [200 ms, 120 s], initial RTO Linux's 1 s where the thesis states 2 s; docs/bottleneck.md), with every behaviour the reference configuration
//! left at Linux's default modelled and switchable to the textbook's (`tcp:key=value`;
//! [`TcpParams`]). Sans-IO like everything the simulator drives: segments and time in, segments
//! out.
//!
//! Each mechanism, its source, its parameter (default first; the other value is the textbook):
//!
//! | mechanism | source | parameter |
//! |---|---|---|
//! | RTO = SRTT + rttvar with Linux's mdev / mdev_max / rttvar and per-round decay; rto_min inside the variance term | `tcp_input.c` `tcp_rtt_estimator`, `tcp_set_rto` ([`rtt`]) | `rto=linux` / `rfc6298` |
//! | SACK and D-SACK (4 blocks without timestamps; header bytes), FACK loss marking (`tcp_fack` = 1), D-SACK undo | RFC 2018, 2883, 6675; `tcp_sacktag_write_queue`, `tcp_update_scoreboard`, `tcp_try_undo_dsack` | `sack=true` / `false` (NewReno's duplicate-ACK counting, RFC 6582) |
//! | F-RTO: after an RTO, new data instead of retransmissions, undo if never-retransmitted data is then acknowledged | RFC 5682; `tcp_process_loss` (`tcp_frto` = 2) | `frto=true` / `false` |
//! | early retransmit (with < 4 segments out, delayed by SRTT/4) and tail loss probe (a probe at 2·SRTT, or 1.5·SRTT + 200 ms with one segment out, replacing an RTO that would come first) | RFC 5827; draft-dukkipati-tcpm-tcp-loss-probe; `tcp_time_to_recover`, `tcp_schedule_loss_probe`, `tcp_send_loss_probe` (`tcp_early_retrans` = 3; probes need SACK) | `early_retrans=3` / `0` |
//! | RACK marking lost retransmissions during recovery (1 ms reordering window) | `tcp_recovery.c` `tcp_rack_mark_lost` (`tcp_recovery` = 1) | `rack=true` / `false` |
//! | slow start after idle: the window halves per idle RTO, not below min(initial, current) | RFC 2861 §3; `tcp_cwnd_restart` | `slow_start_after_idle=true` / `false` |
//! | quick-ACK mode (5 immediate ACKs at the start, after idle, on duplicates) and interactive (ping-pong) mode over the 200 ms delayed ACK | `tcp_input.c` `__tcp_ack_snd_check`, `tcp_event_data_recv` (`receiver`) | `quickack=true` / `false` (an ACK per two full segments) |
//! | retry limits as times (`retries2` 15 ≈ 924.6 s after the first retransmission; SYN retries likewise from the initial RTO) | `tcp_timer.c` `retransmits_timed_out` | `retries_by_time=true` / `false` (counts) |
//! | orphans (closed sockets) give up after `tcp_orphan_retries` (0 → 8 ≈ 102 s), FIN_WAIT_2 ends after 60 s, TIME_WAIT lasts 60 s | `tcp_orphan_retries`, `tcp_fin_timeout`, TCP_TIMEWAIT_LEN | `linux_close=true` / `false` (no orphan limit, 240 s TIME_WAIT) |
//!
//! Always as Linux, no switch: the congestion window counts segments (initial 10); slow start and
//! Reno congestion avoidance grow it only while it limits the sender (`tcp_is_cwnd_limited`);
//! proportional rate reduction (RFC 6937) during recovery; ssthresh = max(cwnd/2, 2) on loss;
//! after an RTO every unSACKed segment is marked lost and retransmitted as the window allows,
//! the RTO doubling up to 120 s; the RTO and its backoff are recomputed only from a valid RTT
//! sample (Karn: no sample from data ever retransmitted), taken on every ACK from the oldest
//! segment it acknowledges (or SACKs); a handshake without a sample leaves the RTO at 3 s;
//! Nagle with Minshall's rule; a SYN on a synchronized connection is answered with an ACK, a
//! repeated SYN by the SYN/ACK at once (unless one was answered less than 500 ms before), which
//! restarts the request's timer from that answer (`tcp_check_req`); an RTO ends a loss probe's
//! episode (`tcp_retransmit_timer`), so the next segment may be probed; segments for no
//! connection are answered with RST.
//!
//! Left out (they do not arise in the testbed): reordering-degree adaptation (its path keeps
//! FIFO order), timestamps, window scaling limits and zero-window probes (the receive window
//! never limits), ECN, TSO and retransmission collapsing, the 300-s window of Linux's minimum
//! RTT filter (the model keeps the connection's minimum). Sequence numbers count bytes from 0
//! (no wrap-around within a run); SYN and FIN take one. Header bytes: 20 (IPv4) + 20 (TCP) +
//! options (see [`Segment::wire_size`]).

mod conn;
mod params;
mod receiver;
pub mod rtt;
mod scoreboard;
mod segment;

#[cfg(test)]
mod tests;

pub use conn::{Tcp, TcpStats};
pub use params::{TcpParams, TlpRule};
pub use rtt::RtoRule;
pub use segment::{SackBlocks, Segment, ACK, FIN, MAX_SACK_BLOCKS, RST, SYN};
