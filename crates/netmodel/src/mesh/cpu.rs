//! A mote's CPU: one FIFO of jobs (receive processing, send preparation, a transmission, a
//! console print), one at a time, each for its [`super::CpuSpec`] delay at the mote's clock.
//! The MAC and the RDCs queue their transmissions here; a job's end hands the packet on.

use coap_time::Instant;

use super::nd::is_nd;
use super::report::Cause;
use super::rpl::is_control;
use super::topology::Role;
use super::{CpuSpec, Mesh, MeshEvent, CPU_REFERENCE_HZ};
use crate::medium::{Packet, Schedule};

#[derive(Debug, Clone, Copy)]
pub(super) enum Job {
    Idle,
    Rx(Packet),
    Prepare(Packet),
    /// Transmit to the next hop (on a CSMA mote: the head of that neighbour's queue).
    Send(Packet, u16),
    /// The firmware prints this many bytes on its console, waiting for the UART.
    Print(u32),
}

/// A mote's [`CpuSpec`] delays at its own clock, ns.
#[derive(Debug, Clone, Copy)]
pub(super) struct CpuNs {
    pub(super) rx_process: u64,
    pub(super) tx_prepare: u64,
    pub(super) app: u64,
    pub(super) client_app: u64,
}

impl CpuNs {
    /// `cpu`'s delays on a CPU clocked at `hz` (rounded down to the ns; exact at the reference).
    pub(super) fn at(cpu: &CpuSpec, hz: u32) -> Self {
        let scale = |us: u32| us as u64 * 1000 * CPU_REFERENCE_HZ as u64 / hz.max(1) as u64;
        CpuNs {
            rx_process: scale(cpu.rx_process_us),
            tx_prepare: scale(cpu.tx_prepare_us),
            app: scale(cpu.app_us),
            client_app: scale(cpu.client_app_us),
        }
    }
}

impl Mesh {
    pub(super) fn push_job<S: Schedule<MeshEvent>>(&mut self, now: u64, n: usize, job: Job, sched: &mut S) {
        self.nodes[n].jobs.push_back(job);
        if !self.nodes[n].busy {
            self.run_next(now, n, sched);
        }
    }

    /// Starts `n`'s next job, if any.
    pub(super) fn run_next<S: Schedule<MeshEvent>>(&mut self, now: u64, n: usize, sched: &mut S) {
        loop {
            let node = &mut self.nodes[n];
            let Some(job) = node.jobs.pop_front() else {
                node.busy = false;
                node.current = Job::Idle;
                return;
            };
            node.busy = true;
            node.current = job;
            let cpu = node.cpu;
            // the CPU's time on the job (a send holds it as its MAC says)
            let busy_ns = match job {
                Job::Rx(p) => {
                    node.rx_pending -= 1;
                    let app = p.to.index() == n && self.spec.nodes[n].role == Role::Server && !is_control(&p);
                    cpu.rx_process + if app { cpu.app } else { 0 }
                }
                Job::Prepare(p) => {
                    let own = p.from.index() == n && self.spec.nodes[n].role == Role::Client && !is_control(&p);
                    cpu.tx_prepare + if own { cpu.client_app } else { 0 }
                }
                Job::Print(bytes) => self.spec.cpu.print_ns(bytes),
                Job::Send(p, nh) => {
                    // a Cooja mote's CSMA: not before its last send's ACK wait has run its course
                    let after = self.nodes[n].send_after_ns;
                    if now < after {
                        let node = &mut self.nodes[n];
                        node.jobs.push_front(job);
                        node.current = Job::Idle;
                        sched.wake(Instant::from_nanos(after), MeshEvent::CpuDone(n as u16));
                        return;
                    }
                    let going = if self.nodes[n].cm {
                        self.cm_send(now, n, p, nh, sched)
                    } else {
                        self.strobe(now, n, p, nh, sched)
                    };
                    if going {
                        return;
                    }
                    continue;
                }
                Job::Idle => continue,
            };
            sched.wake(Instant::from_nanos(now + busy_ns), MeshEvent::CpuDone(n as u16));
            return;
        }
    }

    pub(super) fn cpu_done<S: Schedule<MeshEvent>>(&mut self, now: u64, n: usize, sched: &mut S) {
        let logs = self.spec.cpu.uart_byte_ns > 0 && self.spec.nodes[n].role == Role::Client;
        let mut current = self.nodes[n].current;
        if let Job::Rx(p) = &mut current {
            if self.rpl_etx() && !is_control(p) && self.rpl_verify(now, n, p, sched) {
                self.drop_packet(n, Cause::RplLoop, *p, sched);
                return self.run_next(now, n, sched);
            }
        }
        if matches!(current, Job::Rx(_)) && !self.nd.is_empty() {
            self.nd_packet_in(n);
        }
        match current {
            Job::Rx(p) if is_nd(&p) => self.nd_input(now, n, p, sched),
            Job::Rx(p) if is_control(&p) => self.rpl_input(now, n, p, sched),
            Job::Prepare(p) if is_control(&p) => self.rpl_to_mac(n, p, sched),
            Job::Rx(mut p) if p.to.index() == n => {
                self.nodes[n].stats.delivered += 1;
                if self.rpl_etx() {
                    p.note = 0; // the hop-by-hop option stays in the mesh
                }
                sched.deliver(Instant::from_nanos(now), 0, p);
                // a client logs the response before its next request can go (that one, sent by
                // the stack at this instant, queues behind)
                let bytes = self.spec.cpu.client_log_response_bytes;
                if logs && bytes > 0 {
                    self.nodes[n].jobs.push_front(Job::Print(bytes));
                }
            }
            Job::Rx(p) => {
                self.nodes[n].stats.forwarded += 1;
                self.nodes[n].jobs.push_back(Job::Prepare(p));
            }
            Job::Prepare(p) => {
                self.route(now, n, p, sched);
                // a client logs its request as the send returns: after the transmission on a
                // nullmac mote (the send goes first), at once where the MAC queued it or dropped it
                let bytes = self.spec.cpu.client_log_request_bytes;
                if logs && bytes > 0 && p.from.index() == n {
                    let jobs = &mut self.nodes[n].jobs;
                    let after_send = matches!(jobs.front(), Some(Job::Send(q, _)) if q.id == p.id);
                    jobs.insert(usize::from(after_send), Job::Print(bytes));
                }
            }
            Job::Send(..) | Job::Print(_) | Job::Idle => {}
        }
        self.run_next(now, n, sched);
    }
}
