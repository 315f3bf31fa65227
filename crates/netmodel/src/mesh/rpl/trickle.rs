//! RPL's DIO trickle timer (rpl-timers.c: `new_dio_interval`, `handle_dio_timer`,
//! `rpl_reset_dio_timer`): I = 2^k ms in clock ticks; the DIO at I/2 + (I/2)·r/65535 (r a
//! 16-bit `random_rand()`) unless `redundancy` consistent DIOs were heard in the interval; the
//! interval then ends and doubles, up to Imax. Sans-IO: the caller draws `r`, arms the timers
//! and sends the DIO.

use super::{CLOCK_SECOND, RANDOM_RAND_MAX};

/// One mote's trickle timer.
#[derive(Debug, Default)]
pub(super) struct Trickle {
    /// The interval's exponent: I = 2^k ms.
    k: u32,
    /// Consistent DIOs heard in this interval (`dio_counter`).
    heard: u32,
    /// Its DIO is still due in this interval.
    due: bool,
    /// Ticks from the DIO to the interval's end.
    rest: u64,
    /// Counts the intervals' timers: one of an earlier interval is stale.
    gen: u32,
}

/// What the timer's expiry asks for.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Fired {
    /// The DIO's time: send it if `send` (fewer than `redundancy` heard), then wait `rest`
    /// ticks to the interval's end.
    Dio { send: bool, rest: u64 },
    /// The interval ended (doubled, up to Imax): start the next ([`Trickle::new_interval`]).
    Over,
}

impl Trickle {
    /// Whether a timer of generation `gen` is this interval's.
    pub(super) fn is_current(&self, gen: u32) -> bool {
        gen == self.gen
    }

    /// This interval's generation.
    pub(super) fn gen(&self) -> u32 {
        self.gen
    }

    /// A consistent DIO was heard.
    pub(super) fn hear(&mut self) {
        self.heard += 1;
    }

    /// Starts from Imin = 2^`imin` ms (then [`Trickle::new_interval`]).
    pub(super) fn start(&mut self, imin: u32) {
        self.k = imin;
    }

    /// Back to Imin, unless there already: true when a new interval must start.
    pub(super) fn reset(&mut self, imin: u32) -> bool {
        if self.k > imin {
            self.k = imin;
            return true;
        }
        false
    }

    /// A new interval with the random draw `r` (16 bits): the ticks to its DIO, and the
    /// generation of the timer to arm.
    pub(super) fn new_interval(&mut self, r: u64) -> (u64, u32) {
        let interval = ((1u64 << self.k) * CLOCK_SECOND) / 1000;
        let half = interval / 2;
        let ticks = half + (half * r) / RANDOM_RAND_MAX;
        self.rest = interval - ticks;
        self.due = true;
        self.heard = 0;
        self.gen = self.gen.wrapping_add(1);
        (ticks, self.gen)
    }

    /// The timer fired: the DIO (suppressed after `redundancy` heard; 0: never suppressed), or
    /// the interval's end, doubling it up to 2^`kmax` ms.
    pub(super) fn fire(&mut self, redundancy: u32, kmax: u32) -> Fired {
        if self.due {
            self.due = false;
            return Fired::Dio { send: redundancy == 0 || self.heard < redundancy, rest: self.rest };
        }
        if self.k < kmax {
            self.k += 1;
        }
        Fired::Over
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn imin_12_gives_an_interval_of_524_ticks_the_dio_in_its_second_half() {
        // I = 2^12 ms = 4.096 s = 524 ticks of 1/128 s (524.288 cut); the DIO at 262 + 262·r/65535
        let mut t = Trickle::default();
        t.start(12);
        assert_eq!(t.new_interval(0), (262, 1));
        assert_eq!(t.fire(10, 20), Fired::Dio { send: true, rest: 262 });
        assert_eq!(t.new_interval(65_535), (524, 2));
        assert_eq!(t.fire(10, 20), Fired::Dio { send: true, rest: 0 });
        assert!(t.is_current(2) && !t.is_current(1));
    }

    #[test]
    fn redundancy_suppresses_the_dio_and_the_interval_doubles_up_to_imax() {
        let mut t = Trickle::default();
        t.start(12);
        t.new_interval(0);
        for _ in 0..10 {
            t.hear();
        }
        assert_eq!(t.fire(10, 13), Fired::Dio { send: false, rest: 262 });
        // 0: no suppression
        t.new_interval(0);
        t.hear();
        assert_eq!(t.fire(0, 13), Fired::Dio { send: true, rest: 262 });
        // the end: 2^13 ms = 1048 ticks; then Imax (13) holds
        assert_eq!(t.fire(0, 13), Fired::Over);
        assert_eq!(t.new_interval(0), (524, 3));
        t.fire(0, 13);
        assert_eq!(t.fire(0, 13), Fired::Over);
        assert_eq!(t.new_interval(0).0, 524);
        // a reset goes back to Imin once
        assert!(t.reset(12) && !t.reset(12));
        assert_eq!(t.new_interval(0).0, 262);
    }
}
