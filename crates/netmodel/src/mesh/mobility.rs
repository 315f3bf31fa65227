//! Moving motes (NITK ch. 6: clients move, the border router and servers stay; `docs/mesh.md`,
//! "Mobility"). Positions change as jumps at sample times, as Cooja's mobility plugin applies a
//! positions file; the mesh recomputes its links and routes at each.
//!
//! * Generated traces, sampled every `sample_s` (1 s): each mobile mote moves continuously
//!   under its model between samples and jumps to where the model has it at each sample. The
//!   models follow BonnMotion's semantics (defaults noted; the presets' values where those would
//!   not move: [`MobilityModel`]).
//!   - random waypoint: destination uniform in the area, speed uniform in [v_min, v_max],
//!     straight legs, a pause uniform in [0, pause_max] after each;
//!   - Gauss-Markov: every Δ the velocity becomes α·v + (1 − α)·v̄ + σ·√(1 − α²)·N(0, 1) per axis
//!     (v̄: a per-mote mean velocity of magnitude `mean_speed` in a uniform direction), capped at
//!     v_max; at the border the mote bounces (position mirrored, the normal components of v and
//!     v̄ flipped);
//!   - Manhattan grid: streets every `block` metres; a mote starts at the nearest street point,
//!     moves in steps of `step` metres, turns at an intersection with probability `turn_p`
//!     (left or right alike; a turn or straight course that would leave the area is replaced by
//!     the other turn or a reversal), draws a new speed N(mean, sd) floored at `speed_min` with
//!     probability `speed_change_p` per step, reverses at the area's border;
//!   - pursue: one virtual target moves by random waypoint without pauses; every sample each
//!     mote heads for p + a·(target − p) + U(−m, m) per axis at a speed uniform in
//!     [v_min, v_max] (reaching it stops it), clamped to the area.
//! * Traces from a file: Cooja's positions format, one move per line `moteIndex time x y`
//!   (0-based mote index in simulation order, seconds, metres), `#` lines ignored; moves apply at
//!   their times in time order; after the last one the file starts again from that time.
//!
//! Draws: each mote's own stream (`Stream::Mobility`), the pursue target its own
//! (`Stream::PursueTarget`). The Gaussian draws are Box–Muller over the stream's uniforms,
//! written here rather than taken from `rand_distr`, which would bring a second `rand` into the
//! dependency tree for one function.

use rand_chacha::ChaCha8Rng;
use rand_core::RngCore;
use serde::{Deserialize, Serialize};

/// A point, m.
pub type Point = (f64, f64);

/// Positions within this much of the area's border, or of a street, count as on it.
const EPS: f64 = 1e-9;

/// The rectangle the motes move in, m.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Area {
    /// Left edge.
    pub x_min: f64,
    /// Bottom edge.
    pub y_min: f64,
    /// Right edge.
    pub x_max: f64,
    /// Top edge.
    pub y_max: f64,
}

impl Area {
    /// Whether `p` lies inside (borders included).
    pub fn contains(&self, p: Point) -> bool {
        p.0 >= self.x_min - EPS && p.0 <= self.x_max + EPS && p.1 >= self.y_min - EPS && p.1 <= self.y_max + EPS
    }
    fn clamp(&self, p: Point) -> Point {
        (p.0.clamp(self.x_min, self.x_max), p.1.clamp(self.y_min, self.y_max))
    }
    fn uniform(&self, rng: &mut ChaCha8Rng) -> Point {
        (uniform(rng, self.x_min, self.x_max), uniform(rng, self.y_min, self.y_max))
    }
}

/// A mobility model and its parameters (speeds m/s, times s, lengths m).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(tag = "model", rename_all = "snake_case", deny_unknown_fields)]
pub enum MobilityModel {
    /// Random waypoint (BonnMotion defaults: 0.5–1.5 m/s, pauses up to 60 s).
    RandomWaypoint {
        /// Slowest leg.
        v_min: f64,
        /// Fastest leg.
        v_max: f64,
        /// Longest pause.
        pause_max_s: f64,
    },
    /// Gauss-Markov (BonnMotion's OriginalGaussMarkov defaults α 1, mean 0 never move; the
    /// presets' α 0.75, mean speed 1, σ 0.5, Δ 2.5 s, cap 1.5 m/s are our choice).
    GaussMarkov {
        /// Memory of the velocity, 0..=1.
        alpha: f64,
        /// Magnitude of the mean velocity.
        mean_speed: f64,
        /// Standard deviation of the velocity's random part.
        sigma: f64,
        /// Time between velocity updates.
        delta_s: f64,
        /// Speed cap.
        v_max: f64,
    },
    /// Manhattan grid (BonnMotion defaults but the block: 10 m, the 6 × 6 lattice's lines).
    Manhattan {
        /// Distance between streets.
        block_m: f64,
        /// Length of an update step.
        step_m: f64,
        /// Probability of turning at an intersection.
        turn_p: f64,
        /// Probability of a new speed per step.
        speed_change_p: f64,
        /// Mean speed.
        speed_mean: f64,
        /// Its standard deviation.
        speed_sd: f64,
        /// Slowest speed.
        speed_min: f64,
    },
    /// Pursue (BonnMotion defaults: aggressiveness 0.5, randomness 0.5 m, speeds 0.5–1.5).
    Pursue {
        /// Share of the way to the target aimed at each sample.
        aggressiveness: f64,
        /// Half-width of the uniform offset per axis.
        randomness_m: f64,
        /// Slowest speed.
        v_min: f64,
        /// Fastest speed.
        v_max: f64,
    },
}

impl MobilityModel {
    /// The model named `name` with the presets' parameters.
    pub fn preset(name: &str) -> Option<Self> {
        Some(match name {
            "random_waypoint" => MobilityModel::RandomWaypoint { v_min: 0.5, v_max: 1.5, pause_max_s: 60.0 },
            "gauss_markov" => {
                MobilityModel::GaussMarkov { alpha: 0.75, mean_speed: 1.0, sigma: 0.5, delta_s: 2.5, v_max: 1.5 }
            }
            "manhattan" => MobilityModel::Manhattan {
                block_m: 10.0,
                step_m: 5.0,
                turn_p: 0.5,
                speed_change_p: 0.2,
                speed_mean: 1.0,
                speed_sd: 0.2,
                speed_min: 0.5,
            },
            "pursue" => MobilityModel::Pursue { aggressiveness: 0.5, randomness_m: 0.5, v_min: 0.5, v_max: 1.5 },
            _ => return None,
        })
    }

    /// Sets parameter `key` (the field's name) to `v`.
    pub fn set(&mut self, key: &str, v: f64) -> Result<(), String> {
        let slot = match (self, key) {
            (MobilityModel::RandomWaypoint { v_min, .. }, "v_min") => v_min,
            (MobilityModel::RandomWaypoint { v_max, .. }, "v_max") => v_max,
            (MobilityModel::RandomWaypoint { pause_max_s, .. }, "pause_max_s") => pause_max_s,
            (MobilityModel::GaussMarkov { alpha, .. }, "alpha") => alpha,
            (MobilityModel::GaussMarkov { mean_speed, .. }, "mean_speed") => mean_speed,
            (MobilityModel::GaussMarkov { sigma, .. }, "sigma") => sigma,
            (MobilityModel::GaussMarkov { delta_s, .. }, "delta_s") => delta_s,
            (MobilityModel::GaussMarkov { v_max, .. }, "v_max") => v_max,
            (MobilityModel::Manhattan { block_m, .. }, "block_m") => block_m,
            (MobilityModel::Manhattan { step_m, .. }, "step_m") => step_m,
            (MobilityModel::Manhattan { turn_p, .. }, "turn_p") => turn_p,
            (MobilityModel::Manhattan { speed_change_p, .. }, "speed_change_p") => speed_change_p,
            (MobilityModel::Manhattan { speed_mean, .. }, "speed_mean") => speed_mean,
            (MobilityModel::Manhattan { speed_sd, .. }, "speed_sd") => speed_sd,
            (MobilityModel::Manhattan { speed_min, .. }, "speed_min") => speed_min,
            (MobilityModel::Pursue { aggressiveness, .. }, "aggressiveness") => aggressiveness,
            (MobilityModel::Pursue { randomness_m, .. }, "randomness_m") => randomness_m,
            (MobilityModel::Pursue { v_min, .. }, "v_min") => v_min,
            (MobilityModel::Pursue { v_max, .. }, "v_max") => v_max,
            (m, _) => return Err(format!("mobility: {m:?} has no parameter '{key}'")),
        };
        if !v.is_finite() {
            return Err(format!("mobility: {key} must be a finite number"));
        }
        *slot = v;
        Ok(())
    }

    /// Checks the parameters; on failure, what is wrong.
    pub fn validate(&self) -> Result<(), String> {
        let ok = match *self {
            MobilityModel::RandomWaypoint { v_min, v_max, pause_max_s } => {
                v_min > 0.0 && v_max >= v_min && pause_max_s >= 0.0
            }
            MobilityModel::GaussMarkov { alpha, mean_speed, sigma, delta_s, v_max } => {
                (0.0..=1.0).contains(&alpha) && mean_speed >= 0.0 && sigma >= 0.0 && delta_s > 0.0 && v_max > 0.0
            }
            MobilityModel::Manhattan { block_m, step_m, turn_p, speed_change_p, speed_mean, speed_sd, speed_min } => {
                block_m > 0.0
                    && step_m > 0.0
                    && (0.0..=1.0).contains(&turn_p)
                    && (0.0..=1.0).contains(&speed_change_p)
                    && speed_mean > 0.0
                    && speed_sd >= 0.0
                    && speed_min > 0.0
            }
            MobilityModel::Pursue { aggressiveness, randomness_m, v_min, v_max } => {
                (0.0..=1.0).contains(&aggressiveness) && randomness_m >= 0.0 && v_min > 0.0 && v_max >= v_min
            }
        };
        if ok {
            Ok(())
        } else {
            Err(format!("mobility: parameters out of range in {self:?}"))
        }
    }
}

fn unit(rng: &mut ChaCha8Rng) -> f64 {
    (rng.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}

fn uniform(rng: &mut ChaCha8Rng, a: f64, b: f64) -> f64 {
    a + (b - a) * unit(rng)
}

/// A standard normal draw (Box–Muller, the cosine branch).
fn normal(rng: &mut ChaCha8Rng) -> f64 {
    let u1 = 1.0 - unit(rng); // (0, 1]
    let u2 = unit(rng);
    (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
}

fn dist(a: Point, b: Point) -> f64 {
    ((a.0 - b.0).powi(2) + (a.1 - b.1).powi(2)).sqrt()
}

/// Moves from `p` towards `to` at `speed` for `t` seconds; returns the new point and the time
/// left over if it arrived.
fn towards(p: Point, to: Point, speed: f64, t: f64) -> (Point, f64) {
    let d = dist(p, to);
    if d <= speed * t || d < EPS {
        (to, t - if speed > 0.0 { d / speed } else { 0.0 })
    } else {
        let k = speed * t / d;
        ((p.0 + (to.0 - p.0) * k, p.1 + (to.1 - p.1) * k), 0.0)
    }
}

#[derive(Debug, Clone)]
struct Waypoint {
    dest: Point,
    speed: f64,
    pause_left: f64,
    v: (f64, f64),
    pause_max: f64,
}

impl Waypoint {
    fn new(rng: &mut ChaCha8Rng, area: &Area, v: (f64, f64), pause_max: f64) -> Self {
        Waypoint { dest: area.uniform(rng), speed: uniform(rng, v.0, v.1), pause_left: 0.0, v, pause_max }
    }
    fn advance(&mut self, p: &mut Point, mut t: f64, rng: &mut ChaCha8Rng, area: &Area) {
        while t > EPS {
            if self.pause_left > 0.0 {
                let d = self.pause_left.min(t);
                self.pause_left -= d;
                t -= d;
                if self.pause_left <= EPS {
                    self.pause_left = 0.0;
                    self.dest = area.uniform(rng);
                    self.speed = uniform(rng, self.v.0, self.v.1);
                }
                continue;
            }
            let (q, left) = towards(*p, self.dest, self.speed, t);
            *p = q;
            if left > 0.0 || dist(q, self.dest) < EPS {
                t = left.max(0.0);
                self.pause_left = uniform(rng, 0.0, self.pause_max);
                if self.pause_left <= 0.0 {
                    self.dest = area.uniform(rng);
                    self.speed = uniform(rng, self.v.0, self.v.1);
                }
            } else {
                t = 0.0;
            }
        }
    }
}

#[derive(Debug, Clone)]
enum Walker {
    Waypoint(Waypoint),
    GaussMarkov { v: (f64, f64), mean: (f64, f64), until_update: f64 },
    Manhattan { dir: (f64, f64), speed: f64, to_step: f64 },
    Pursue,
}

/// The directions along the streets through `p` (both axes at an intersection).
fn street_dirs(p: Point, block: f64, area: &Area) -> Vec<(f64, f64)> {
    let on = |v: f64, base: f64| ((v - base) / block - ((v - base) / block).round()).abs() * block < 1e-6;
    let mut d = Vec::new();
    if on(p.0, area.x_min) {
        d.extend([(0.0, 1.0), (0.0, -1.0)]);
    }
    if on(p.1, area.y_min) {
        d.extend([(1.0, 0.0), (-1.0, 0.0)]);
    }
    d.retain(|&(dx, dy)| area.contains((p.0 + dx * 1e-3, p.1 + dy * 1e-3)));
    d
}

fn snap_to_street(p: Point, block: f64, area: &Area) -> Point {
    let snap = |v: f64, base: f64| base + ((v - base) / block).round() * block;
    let a = area.clamp((snap(p.0, area.x_min), p.1));
    let b = area.clamp((p.0, snap(p.1, area.y_min)));
    if dist(p, a) <= dist(p, b) {
        a
    } else {
        b
    }
}

/// Where the models are, and what each mobile mote's model carries from one sample to the next.
#[derive(Debug, Clone)]
pub struct Mover {
    model: MobilityModel,
    area: Area,
    walkers: Vec<Option<Walker>>,
    rngs: Vec<ChaCha8Rng>,
    target: Option<(Point, Waypoint, ChaCha8Rng)>,
    /// Motes the model placed elsewhere than given at time 0 (Manhattan: onto a street).
    placed: Vec<bool>,
}

impl Mover {
    /// Motes at `positions`, those flagged in `mobile` moving under `model`; `rng(i)` is mote
    /// `i`'s stream, `target_rng` the pursue target's.
    pub fn new(
        model: MobilityModel,
        area: Area,
        positions: &mut [Point],
        mobile: &[bool],
        mut rng: impl FnMut(usize) -> ChaCha8Rng,
        mut target_rng: ChaCha8Rng,
    ) -> Self {
        let mut rngs: Vec<ChaCha8Rng> = (0..positions.len()).map(&mut rng).collect();
        let given = positions.to_vec();
        let walkers = positions
            .iter_mut()
            .zip(mobile)
            .zip(rngs.iter_mut())
            .map(|((p, &m), r)| {
                if !m {
                    return None;
                }
                *p = area.clamp(*p);
                Some(match model {
                    MobilityModel::RandomWaypoint { v_min, v_max, pause_max_s } => {
                        Walker::Waypoint(Waypoint::new(r, &area, (v_min, v_max), pause_max_s))
                    }
                    MobilityModel::GaussMarkov { mean_speed, delta_s, .. } => {
                        let a = uniform(r, 0.0, 2.0 * std::f64::consts::PI);
                        let mean = (mean_speed * a.cos(), mean_speed * a.sin());
                        Walker::GaussMarkov { v: mean, mean, until_update: delta_s }
                    }
                    MobilityModel::Manhattan { block_m, speed_mean, speed_sd, speed_min, .. } => {
                        *p = snap_to_street(*p, block_m, &area);
                        let dirs = street_dirs(*p, block_m, &area);
                        let dir = dirs[(r.next_u32() as usize) % dirs.len().max(1)];
                        let speed = (speed_mean + speed_sd * normal(r)).max(speed_min);
                        Walker::Manhattan { dir, speed, to_step: 0.0 }
                    }
                    MobilityModel::Pursue { .. } => Walker::Pursue,
                })
            })
            .collect();
        let target = matches!(model, MobilityModel::Pursue { .. }).then(|| {
            let MobilityModel::Pursue { v_min, v_max, .. } = model else { unreachable!() };
            let start = ((area.x_min + area.x_max) / 2.0, (area.y_min + area.y_max) / 2.0);
            let w = Waypoint::new(&mut target_rng, &area, (v_min, v_max), 0.0);
            (start, w, target_rng)
        });
        let placed = given.iter().zip(positions.iter()).map(|(a, b)| a != b).collect();
        Mover { model, area, walkers, rngs, target, placed }
    }

    /// Moves every mobile mote on by `dt` seconds.
    pub fn advance(&mut self, positions: &mut [Point], dt: f64) {
        let area = self.area;
        let target = self.target.as_mut().map(|(p, w, r)| {
            w.advance(p, dt, r, &area);
            *p
        });
        for ((walker, p), rng) in self.walkers.iter_mut().zip(positions.iter_mut()).zip(self.rngs.iter_mut()) {
            let Some(w) = walker else { continue };
            match (w, self.model) {
                (Walker::Waypoint(wp), _) => wp.advance(p, dt, rng, &area),
                (
                    Walker::GaussMarkov { v, mean, until_update },
                    MobilityModel::GaussMarkov { alpha, sigma, delta_s, v_max, .. },
                ) => {
                    let mut t = dt;
                    while t > EPS {
                        let step = t.min(*until_update);
                        *p = (p.0 + v.0 * step, p.1 + v.1 * step);
                        bounce(p, v, mean, &area);
                        t -= step;
                        *until_update -= step;
                        if *until_update <= EPS {
                            *until_update = delta_s;
                            let k = sigma * (1.0 - alpha * alpha).sqrt();
                            v.0 = alpha * v.0 + (1.0 - alpha) * mean.0 + k * normal(rng);
                            v.1 = alpha * v.1 + (1.0 - alpha) * mean.1 + k * normal(rng);
                            let s = (v.0 * v.0 + v.1 * v.1).sqrt();
                            if s > v_max {
                                *v = (v.0 * v_max / s, v.1 * v_max / s);
                            }
                        }
                    }
                }
                (
                    Walker::Manhattan { dir, speed, to_step },
                    MobilityModel::Manhattan {
                        block_m,
                        step_m,
                        turn_p,
                        speed_change_p,
                        speed_mean,
                        speed_sd,
                        speed_min,
                    },
                ) => {
                    let mut t = dt;
                    while t > EPS {
                        if *to_step <= EPS {
                            *to_step = step_m;
                            if unit(rng) < speed_change_p {
                                *speed = (speed_mean + speed_sd * normal(rng)).max(speed_min);
                            }
                        }
                        // the next decision point: a step's end, an intersection or the border
                        let along = |v: f64, d: f64, base: f64, max: f64| -> f64 {
                            if d == 0.0 {
                                return f64::INFINITY;
                            }
                            let k = (v - base) / block_m;
                            let next = if d > 0.0 { (k + 1e-9).floor() + 1.0 } else { (k - 1e-9).ceil() - 1.0 };
                            let to_street = ((base + next * block_m) - v).abs();
                            let to_border = if d > 0.0 { max - v } else { v - base };
                            to_street.min(to_border.max(0.0))
                        };
                        let ahead =
                            along(p.0, dir.0, area.x_min, area.x_max).min(along(p.1, dir.1, area.y_min, area.y_max));
                        let leg = to_step.min(ahead);
                        let time = leg / *speed;
                        let go = if time <= t { leg } else { *speed * t };
                        *p = area.clamp((p.0 + dir.0 * go, p.1 + dir.1 * go));
                        *to_step -= go;
                        t -= if time <= t { time } else { t };
                        if go + EPS >= ahead {
                            *dir = turn(*p, *dir, block_m, turn_p, rng, &area);
                        }
                    }
                }
                (Walker::Pursue, MobilityModel::Pursue { aggressiveness, randomness_m, v_min, v_max }) => {
                    let tg = target.expect("pursue has a target");
                    let m = randomness_m;
                    let aim = (
                        p.0 + aggressiveness * (tg.0 - p.0) + uniform(rng, -m, m),
                        p.1 + aggressiveness * (tg.1 - p.1) + uniform(rng, -m, m),
                    );
                    let speed = uniform(rng, v_min, v_max);
                    *p = area.clamp(towards(*p, area.clamp(aim), speed, dt).0);
                }
                _ => unreachable!("a walker matches its model"),
            }
        }
    }
}

/// Mirrors `p` back into the area, flipping the normal components of `v` and `mean`.
fn bounce(p: &mut Point, v: &mut (f64, f64), mean: &mut (f64, f64), area: &Area) {
    if p.0 < area.x_min || p.0 > area.x_max {
        p.0 = if p.0 < area.x_min { 2.0 * area.x_min - p.0 } else { 2.0 * area.x_max - p.0 };
        v.0 = -v.0;
        mean.0 = -mean.0;
    }
    if p.1 < area.y_min || p.1 > area.y_max {
        p.1 = if p.1 < area.y_min { 2.0 * area.y_min - p.1 } else { 2.0 * area.y_max - p.1 };
        v.1 = -v.1;
        mean.1 = -mean.1;
    }
    *p = area.clamp(*p);
}

/// The direction after reaching `p` (an intersection, the border, or a street point).
fn turn(p: Point, dir: (f64, f64), block: f64, turn_p: f64, rng: &mut ChaCha8Rng, area: &Area) -> (f64, f64) {
    let fits = |d: (f64, f64)| area.contains((p.0 + d.0 * 1e-3, p.1 + d.1 * 1e-3));
    let dirs = street_dirs(p, block, area);
    let crossing = dirs.iter().any(|d| d.0 * dir.1 - d.1 * dir.0 != 0.0);
    let (left, right) = ((-dir.1, dir.0), (dir.1, -dir.0));
    let mut next = dir;
    if crossing && unit(rng) < turn_p {
        next = if unit(rng) < 0.5 { left } else { right };
        if !fits(next) {
            next = if next == left { right } else { left };
        }
    }
    if !fits(next) {
        next = if fits(dir) { dir } else { (-dir.0, -dir.1) };
    }
    next
}

/// Moving motes in a mesh.
#[derive(Debug, Clone, PartialEq)]
pub struct MobilitySpec {
    /// Where they move.
    pub area: Area,
    /// A model's sampling interval, s (the positions jump at each sample).
    pub sample_s: f64,
    /// How often the report keeps a moving mote's position (its trail), s.
    pub trail_every_s: f64,
    /// What moves them.
    pub source: MobilitySource,
}

/// A model over the flagged motes, or a trace.
#[derive(Debug, Clone, PartialEq)]
pub enum MobilitySource {
    /// `model` moves the motes flagged in `mobile` (indexed like the mesh's motes).
    Model {
        /// The model.
        model: MobilityModel,
        /// Which motes move.
        mobile: Vec<bool>,
    },
    /// A positions file's moves (their motes must exist).
    Trace(Vec<Move>),
}

/// One line of a Cooja positions file.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Move {
    /// The mote's index in simulation order (node id − 1).
    pub mote: u32,
    /// When, s.
    pub t: f64,
    /// Where, m.
    pub x: f64,
    /// Where, m.
    pub y: f64,
}

/// Reads a Cooja positions file; moves sorted by time (file order among equal times).
pub fn parse_positions(text: &str) -> Result<Vec<Move>, String> {
    let mut moves = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let f: Vec<&str> = line.split_whitespace().collect();
        let bad = || format!("positions line {}: expected `moteIndex time x y`, got `{line}`", i + 1);
        if f.len() != 4 {
            return Err(bad());
        }
        let num = |s: &str| s.parse::<f64>().ok().filter(|v| v.is_finite());
        let (Ok(mote), Some(t), Some(x), Some(y)) = (f[0].parse::<u32>(), num(f[1]), num(f[2]), num(f[3])) else {
            return Err(bad());
        };
        if t < 0.0 {
            return Err(format!("positions line {}: negative time {t}", i + 1));
        }
        moves.push(Move { mote, t, x, y });
    }
    moves.sort_by(|a, b| a.t.total_cmp(&b.t));
    Ok(moves)
}

/// Writes moves as a Cooja positions file (numbers in their shortest exact form).
pub fn write_positions(moves: &[Move]) -> String {
    let mut s = String::from("# Cooja mobility positions: moteIndex time x y\n");
    for m in moves {
        s += &format!("{} {} {} {}\n", m.mote, m.t, m.x, m.y);
    }
    s
}

impl Mover {
    /// Whether mote `i` moves.
    pub fn is_mobile(&self, i: usize) -> bool {
        self.walkers.get(i).is_some_and(Option::is_some)
    }

    /// The moves it makes from `pos` (as [`Mover::new`] left them): at time 0 the motes it
    /// placed elsewhere than their layout, then every mobile mote's position at each sample up to
    /// `duration_s` (what the mesh applies, as a file other tools — or a later run — can read).
    pub fn trace(mut self, mut pos: Vec<Point>, sample_s: f64, duration_s: f64) -> Vec<Move> {
        let mut out: Vec<Move> = (0..pos.len())
            .filter(|&i| self.placed[i])
            .map(|i| Move { mote: i as u32, t: 0.0, x: pos[i].0, y: pos[i].1 })
            .collect();
        let mut k = 1u64;
        while k as f64 * sample_s <= duration_s + EPS {
            self.advance(&mut pos, sample_s);
            for (i, p) in pos.iter().enumerate().filter(|(i, _)| self.is_mobile(*i)) {
                out.push(Move { mote: i as u32, t: k as f64 * sample_s, x: p.0, y: p.1 });
            }
            k += 1;
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand_chacha::rand_core::SeedableRng;

    const AREA: Area = Area { x_min: 0.0, y_min: 0.0, x_max: 50.0, y_max: 50.0 };

    fn rng(i: usize) -> ChaCha8Rng {
        ChaCha8Rng::seed_from_u64(1000 + i as u64)
    }

    fn run(model: MobilityModel, secs: u32) -> Vec<Vec<Point>> {
        let mut pos: Vec<Point> = (0..36).map(|k| (10.0 * (k % 6) as f64, 10.0 * (k / 6) as f64)).collect();
        let mobile: Vec<bool> = (0..36).map(|k| k != 14).collect();
        let mut m = Mover::new(model, AREA, &mut pos, &mobile, rng, rng(99));
        let mut out = vec![pos.clone()];
        for _ in 0..secs {
            m.advance(&mut pos, 1.0);
            out.push(pos.clone());
        }
        out
    }

    #[test]
    fn every_model_keeps_the_motes_in_the_area_and_moves_them() {
        for name in ["random_waypoint", "gauss_markov", "manhattan", "pursue"] {
            let model = MobilityModel::preset(name).unwrap();
            model.validate().unwrap();
            let steps = run(model, 1080);
            for (t, ps) in steps.iter().enumerate() {
                for (i, &p) in ps.iter().enumerate() {
                    assert!(AREA.contains(p), "{name}: mote {i} at {p:?} after {t} s");
                }
            }
            assert_eq!(steps[0][14], steps[1080][14], "{name}: a stationary mote stays");
            let moved = (0..36).filter(|&i| dist(steps[0][i], steps[1080][i]) > 1.0).count();
            assert!(moved >= 30, "{name}: only {moved} motes moved");
            // no mote is faster than the model allows (1.5 m/s; Manhattan's speeds are unbounded
            // normals: 4σ above its mean)
            let cap = if name == "manhattan" { 1.0 + 4.0 * 0.2 } else { 1.5 };
            for w in steps.windows(2) {
                for (i, (a, b)) in w[0].iter().zip(&w[1]).enumerate() {
                    assert!(dist(*a, *b) <= cap + 1e-9, "{name}: mote {i} jumped");
                }
            }
        }
    }

    /// α = 1: the velocity never changes, so the mote moves in a straight line (inside the area).
    #[test]
    fn gauss_markov_with_alpha_one_moves_in_a_straight_line() {
        let model = MobilityModel::GaussMarkov { alpha: 1.0, mean_speed: 1.0, sigma: 0.5, delta_s: 2.5, v_max: 1.5 };
        let mut pos = vec![(25.0, 25.0)];
        let mut m = Mover::new(model, AREA, &mut pos, &[true], rng, rng(99));
        let mut track = vec![pos[0]];
        for _ in 0..20 {
            m.advance(&mut pos, 1.0);
            track.push(pos[0]);
        }
        let (a, b) = (track[0], track[20]);
        assert!((dist(a, b) - 20.0).abs() < 1e-9, "speed 1 m/s for 20 s: {}", dist(a, b));
        for &p in &track {
            let cross = (b.0 - a.0) * (p.1 - a.1) - (b.1 - a.1) * (p.0 - a.0);
            assert!(cross.abs() < 1e-9, "{p:?} off the line");
        }
    }

    /// Manhattan motes stay on the streets (x or y on the 10 m lines).
    #[test]
    fn manhattan_motes_stay_on_streets() {
        let steps = run(MobilityModel::preset("manhattan").unwrap(), 600);
        let on = |v: f64| (v / 10.0 - (v / 10.0).round()).abs() < 1e-6;
        for ps in &steps {
            for &p in ps {
                assert!(on(p.0) || on(p.1), "{p:?} off the streets");
            }
        }
    }

    #[test]
    fn a_positions_file_round_trips() {
        let mut pos = vec![(0.0, 0.0), (10.0, 10.0), (20.0, 20.0)];
        let model = MobilityModel::preset("random_waypoint").unwrap();
        let mover = Mover::new(model, AREA, &mut pos, &[false, true, true], rng, rng(99));
        let moves = mover.trace(pos, 1.0, 30.0);
        assert_eq!(moves.len(), 2 * 30);
        let text = write_positions(&moves);
        assert_eq!(parse_positions(&text).unwrap(), moves);
        assert!(parse_positions("# c\n0 1.0 2 3\n\n1 0.5 1 1\n").unwrap()[0].mote == 1, "sorted by time");
        assert!(parse_positions("0 1 2").unwrap_err().contains("line 1"));
        assert!(parse_positions("x 1 2 3").is_err());
    }
}
