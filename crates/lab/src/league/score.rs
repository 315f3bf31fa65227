//! The league's figures, from a results directory: each replication's statistics from the cells'
//! `clients.csv` rows, their means and 95 % confidence intervals per algorithm and league cell,
//! and each algorithm's regret against the best of its cell.
//!
//! Definitions (docs/league.md says the same):
//! * A **league cell** is a plan cell less its algorithm: the cells of a results directory whose
//!   parameters differ only in `cc` (or `stack`) are one league cell, the algorithms its entrants.
//! * **Wired** (the bottleneck): per replication, the median and p90 (type 7) of the clients'
//!   FCTs — a client without an FCT counts as infinitely slow — and Jain's index of the clients'
//!   rates (exchanges / FCT; 0 without an FCT). The league's figure is the median FCT, lower is
//!   better; regret = FCT / best FCT − 1.
//! * **Mesh**: per replication, the exchanges completed (answered) per simulated second, and Jain's
//!   index of the clients' completed exchanges. The figure is completed/s, higher is better;
//!   regret = 1 − completed/s / best completed/s.
//! * Both: retransmissions per exchange started (Σ retransmissions / Σ exchanges).
//! * Each figure is the mean over replications; its 95 % confidence interval is Student's t
//!   (n − 1 degrees of freedom) times the standard error. An entrant is **tied** with the best when
//!   the two intervals overlap: the replications cannot tell them apart.

use std::collections::BTreeMap;

use runstats::quantile;

/// One replication of one cell.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rep {
    /// Median FCT, s (wired; infinite when half the clients have none; NaN on the mesh).
    pub fct_p50: f64,
    /// p90 FCT, s (wired).
    pub fct_p90: f64,
    /// Completed exchanges per simulated second (mesh; NaN on the bottleneck).
    pub completed_per_s: f64,
    /// Jain's fairness index of the clients' rates (wired) or completed exchanges (mesh).
    pub jain: f64,
    /// Retransmissions per exchange started.
    pub retx_per_exchange: f64,
}

/// A client's row of `clients.csv`, as the league reads it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ClientRow {
    /// The replication.
    pub rep: u32,
    /// Its FCT, s, if it has one.
    pub fct_s: Option<f64>,
    /// Exchanges started.
    pub exchanges: u64,
    /// Exchanges that failed (never answered).
    pub failed: u64,
    /// Retransmissions.
    pub retransmissions: u64,
}

/// Jain's index (runstats's, the one the mesh summary reports); NaN for no clients or all zero.
pub fn jain(x: &[f64]) -> f64 {
    runstats::jain(x).unwrap_or(f64::NAN)
}

/// The replications of a cell from its clients' rows (in any order), replication by replication.
/// `duration_s` is the mesh run's simulated length (None: a bottleneck cell).
pub fn reps(rows: &[ClientRow], duration_s: Option<f64>) -> Vec<Rep> {
    let mut by_rep: BTreeMap<u32, Vec<&ClientRow>> = BTreeMap::new();
    for r in rows {
        by_rep.entry(r.rep).or_default().push(r);
    }
    by_rep
        .values()
        .map(|clients| {
            let started: u64 = clients.iter().map(|c| c.exchanges).sum();
            let retx: u64 = clients.iter().map(|c| c.retransmissions).sum();
            let retx_per_exchange = if started == 0 { f64::NAN } else { retx as f64 / started as f64 };
            match duration_s {
                Some(d) => {
                    let done: Vec<f64> = clients.iter().map(|c| c.exchanges.saturating_sub(c.failed) as f64).collect();
                    Rep {
                        fct_p50: f64::NAN,
                        fct_p90: f64::NAN,
                        completed_per_s: done.iter().sum::<f64>() / d,
                        jain: jain(&done),
                        retx_per_exchange,
                    }
                }
                None => {
                    let mut fct: Vec<f64> = clients.iter().map(|c| c.fct_s.unwrap_or(f64::INFINITY)).collect();
                    fct.sort_by(f64::total_cmp);
                    let rates: Vec<f64> = clients
                        .iter()
                        .map(|c| match c.fct_s {
                            Some(f) if f > 0.0 => c.exchanges.saturating_sub(c.failed) as f64 / f,
                            _ => 0.0,
                        })
                        .collect();
                    Rep {
                        fct_p50: quantile_inf(&fct, 0.5),
                        fct_p90: quantile_inf(&fct, 0.9),
                        completed_per_s: f64::NAN,
                        jain: jain(&rates),
                        retx_per_exchange,
                    }
                }
            }
        })
        .collect()
}

/// A type-7 quantile of sorted values that may end in infinities: infinite where it reaches or
/// interpolates towards one (plain arithmetic would give NaN at a value next to one).
fn quantile_inf(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let h = (sorted.len() - 1) as f64 * p.clamp(0.0, 1.0);
    let lo = h.floor() as usize;
    if h == lo as f64 {
        return sorted[lo];
    }
    if sorted[lo + 1].is_infinite() {
        return f64::INFINITY;
    }
    quantile(sorted, p)
}

/// Student's t quantile 0.975 for `df` degrees of freedom: the table to 30, then
/// 1.96 + 2.4/df (within 0.002 of the exact values from 31 on). Written out: thirty constants
/// of any statistics table, where a statistics crate would be one more dependency for them.
pub fn t975(df: usize) -> f64 {
    const T: [f64; 30] = [
        12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145, 2.131,
        2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042,
    ];
    match df {
        0 => f64::INFINITY,
        1..=30 => T[df - 1],
        _ => 1.96 + 2.4 / df as f64,
    }
}

/// Mean and the half-width of its 95 % confidence interval (infinite for one value; the mean is
/// infinite when any value is, NaN when any is NaN).
pub fn mean_ci(v: &[f64]) -> (f64, f64) {
    let n = v.len();
    if n == 0 {
        return (f64::NAN, f64::NAN);
    }
    let mean = v.iter().sum::<f64>() / n as f64;
    if !mean.is_finite() || n == 1 {
        return (mean, f64::INFINITY);
    }
    let var = v.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / (n - 1) as f64;
    (mean, t975(n - 1) * (var / n as f64).sqrt())
}

/// Whether the league's figure is better lower (FCT, the bottleneck) or higher (completed/s).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Figure {
    /// Median FCT, s: lower is better.
    FctMedian,
    /// Completed exchanges per second: higher is better.
    CompletedPerS,
}

impl Figure {
    /// Its name in the tables.
    pub fn name(self) -> &'static str {
        match self {
            Figure::FctMedian => "median FCT (s)",
            Figure::CompletedPerS => "completed/s",
        }
    }

    /// Is `a` better than `b`? (NaN is never better; infinity is the worst FCT.)
    fn better(self, a: f64, b: f64) -> bool {
        match self {
            Figure::FctMedian => a < b || (b.is_nan() && !a.is_nan()),
            Figure::CompletedPerS => a > b || (b.is_nan() && !a.is_nan()),
        }
    }

    /// How far `v` falls behind `best`: FCT / best − 1, or 1 − rate / best. 0 for the best itself,
    /// NaN where the cell has no usable best (every FCT infinite, every rate 0).
    pub fn regret(self, v: f64, best: f64) -> f64 {
        match self {
            Figure::FctMedian if best.is_finite() && best > 0.0 => {
                if v.is_nan() {
                    f64::NAN
                } else {
                    v / best - 1.0
                }
            }
            Figure::CompletedPerS if best.is_finite() && best > 0.0 => 1.0 - v / best,
            _ => f64::NAN,
        }
    }
}

/// An entrant's figures in one league cell.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Entry {
    /// The algorithm, as the plan wrote it.
    pub algorithm: String,
    /// Replications.
    pub reps: usize,
    /// The league's figure: mean and 95 % half-width.
    pub value: f64,
    pub ci95: f64,
    /// Regret against the cell's best (0 for the best).
    pub regret: f64,
    /// Its interval overlaps the best's.
    pub tied: bool,
    /// Means over replications of the other statistics.
    pub fct_p50_s: f64,
    pub fct_p90_s: f64,
    pub completed_per_s: f64,
    pub jain: f64,
    pub retx_per_exchange: f64,
}

/// A league cell: the network and workload, every entrant's figures.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct LeagueCell {
    /// Short code: W1… on the bottleneck, M1… on the mesh, in plan order.
    pub code: String,
    /// Its parameters other than the algorithm, as `key=value, …`.
    pub label: String,
    /// The figure ranked.
    pub figure: Figure,
    /// The best entrant's name.
    pub best: String,
    /// The entrants, in the order given.
    pub entries: Vec<Entry>,
}

/// One cell's replications per algorithm, before ranking.
#[derive(Debug)]
pub struct Measured {
    pub label: String,
    pub mesh: bool,
    pub by_algorithm: Vec<(String, Vec<Rep>)>,
}

/// Ranks the entrants of each cell (cells in the order given; W/M codes numbered in it).
pub fn rank(cells: Vec<Measured>) -> Vec<LeagueCell> {
    let (mut w, mut m) = (0, 0);
    cells
        .into_iter()
        .map(|c| {
            let figure = if c.mesh { Figure::CompletedPerS } else { Figure::FctMedian };
            let code = if c.mesh {
                m += 1;
                format!("M{m}")
            } else {
                w += 1;
                format!("W{w}")
            };
            let col = |reps: &[Rep], f: fn(&Rep) -> f64| mean_ci(&reps.iter().map(f).collect::<Vec<_>>());
            let mut entries: Vec<Entry> = c
                .by_algorithm
                .iter()
                .map(|(a, reps)| {
                    let (fct, rate) = (col(reps, |r| r.fct_p50), col(reps, |r| r.completed_per_s));
                    let (value, ci95) = match figure {
                        Figure::FctMedian => fct,
                        Figure::CompletedPerS => rate,
                    };
                    Entry {
                        algorithm: a.clone(),
                        reps: reps.len(),
                        value,
                        ci95,
                        regret: f64::NAN,
                        tied: false,
                        fct_p50_s: fct.0,
                        fct_p90_s: col(reps, |r| r.fct_p90).0,
                        completed_per_s: rate.0,
                        jain: col(reps, |r| r.jain).0,
                        retx_per_exchange: col(reps, |r| r.retx_per_exchange).0,
                    }
                })
                .collect();
            let best = entries.iter().fold(None::<&Entry>, |b, e| match b {
                Some(b) if !figure.better(e.value, b.value) => Some(b),
                _ => Some(e),
            });
            let (best_name, best_v, best_ci) =
                best.map_or((String::new(), f64::NAN, f64::NAN), |b| (b.algorithm.clone(), b.value, b.ci95));
            for e in &mut entries {
                e.regret = figure.regret(e.value, best_v);
                // overlapping intervals (an infinite value overlaps only another infinite one)
                e.tied = e.value == best_v || (e.value.is_finite() && (e.value - best_v).abs() <= e.ci95 + best_ci);
            }
            LeagueCell { code, label: c.label, figure, best: best_name, entries }
        })
        .collect()
}

/// Slack of the "within 3 %" counts (and the heat map's 3 % shade): a ratio of 103/100 is 3 %,
/// not 3.0000000000000027 %.
pub(crate) const EPS: f64 = 1e-9;

/// An algorithm's line of the league table.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Standing {
    pub algorithm: String,
    /// The largest regret over the cells (infinite/NaN cells count as infinite) and where.
    pub worst_regret: f64,
    pub worst_cell: String,
    /// The mean regret over the cells with a usable best.
    pub mean_regret: f64,
    /// Cells within 3 % and 5 % of the best, and tied with it.
    pub within_3: usize,
    pub within_5: usize,
    pub tied: usize,
    /// Cells it ran.
    pub cells: usize,
    /// Mean over cells of its Jain index, and of its retransmissions per exchange.
    pub mean_jain: f64,
    pub mean_retx_per_exchange: f64,
}

/// The mean of the finite values (NaN without any).
fn finite_mean(v: impl Iterator<Item = f64>) -> f64 {
    let (sum, n) = v.filter(|x| x.is_finite()).fold((0.0, 0usize), |(s, n), x| (s + x, n + 1));
    if n == 0 {
        f64::NAN
    } else {
        sum / n as f64
    }
}

/// The league table: every algorithm's standing, best (smallest worst-case regret, then mean
/// regret, then name) first.
pub fn standings(cells: &[LeagueCell]) -> Vec<Standing> {
    let mut by: BTreeMap<&str, Vec<(&LeagueCell, &Entry)>> = BTreeMap::new();
    for c in cells {
        for e in &c.entries {
            by.entry(e.algorithm.as_str()).or_default().push((c, e));
        }
    }
    let mut out: Vec<Standing> = by
        .into_iter()
        .map(|(a, es)| {
            let usable: Vec<&(&LeagueCell, &Entry)> =
                es.iter().filter(|(c, _)| c.entries.iter().any(|e| e.regret == 0.0)).collect();
            let regret_of = |e: &Entry| if e.regret.is_nan() { f64::INFINITY } else { e.regret };
            let worst = usable.iter().fold(None::<&(&LeagueCell, &Entry)>, |w, x| match w {
                Some(w) if regret_of(w.1) >= regret_of(x.1) => Some(w),
                _ => Some(x),
            });
            Standing {
                algorithm: a.to_string(),
                worst_regret: worst.map_or(f64::NAN, |w| regret_of(w.1)),
                worst_cell: worst.map_or(String::new(), |w| w.0.code.clone()),
                mean_regret: usable.iter().map(|(_, e)| regret_of(e)).sum::<f64>() / usable.len().max(1) as f64,
                within_3: usable.iter().filter(|(_, e)| e.regret <= 0.03 + EPS).count(),
                within_5: usable.iter().filter(|(_, e)| e.regret <= 0.05 + EPS).count(),
                tied: usable.iter().filter(|(_, e)| e.tied).count(),
                cells: es.len(),
                mean_jain: finite_mean(es.iter().map(|(_, e)| e.jain)),
                mean_retx_per_exchange: finite_mean(es.iter().map(|(_, e)| e.retx_per_exchange)),
            }
        })
        .collect();
    out.sort_by(|a, b| {
        a.worst_regret
            .total_cmp(&b.worst_regret)
            .then(a.mean_regret.total_cmp(&b.mean_regret))
            .then(a.algorithm.cmp(&b.algorithm))
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(rep: u32, fct: Option<f64>, ex: u64, failed: u64, retx: u64) -> ClientRow {
        ClientRow { rep, fct_s: fct, exchanges: ex, failed, retransmissions: retx }
    }

    #[test]
    fn jain_by_hand() {
        assert_eq!(jain(&[1.0, 1.0, 1.0]), 1.0);
        // (1+3)² / (2·(1+9)) = 16/20
        assert!((jain(&[1.0, 3.0]) - 0.8).abs() < 1e-12);
        // one of four has everything: 1/4
        assert_eq!(jain(&[0.0, 0.0, 0.0, 5.0]), 0.25);
        assert!(jain(&[]).is_nan() && jain(&[0.0, 0.0]).is_nan());
    }

    #[test]
    fn wired_replication_by_hand() {
        // three clients of 50 exchanges: FCTs 10, 20, 40 s; 5 retransmissions in all
        let r = reps(&[row(0, Some(20.0), 50, 0, 2), row(0, Some(10.0), 50, 0, 0), row(0, Some(40.0), 50, 0, 3)], None);
        assert_eq!(r.len(), 1);
        assert_eq!(r[0].fct_p50, 20.0);
        // type 7: h = 2·0.9 = 1.8 → 20 + 0.8·(40 − 20) = 36
        assert!((r[0].fct_p90 - 36.0).abs() < 1e-12);
        // rates 2.5, 5, 1.25: (8.75)² / (3·(6.25 + 25 + 1.5625)) = 76.5625 / 98.4375
        assert!((r[0].jain - 76.5625 / 98.4375).abs() < 1e-12);
        assert!((r[0].retx_per_exchange - 5.0 / 150.0).abs() < 1e-12);
        assert!(r[0].completed_per_s.is_nan());
    }

    #[test]
    fn a_client_without_fct_is_infinitely_slow() {
        // two of three without an FCT: the median is infinite, the p10 is not
        let rows = [row(0, Some(10.0), 50, 0, 0), row(0, None, 50, 3, 60), row(0, None, 50, 2, 60)];
        let r = reps(&rows, None);
        assert_eq!(r[0].fct_p50, f64::INFINITY);
        let mut v = [10.0, f64::INFINITY, f64::INFINITY];
        v.sort_by(f64::total_cmp);
        assert_eq!(quantile_inf(&v, 0.0), 10.0);
        // one of three: the median (h = 1) is the second value, finite; p90 (h = 1.8) is not
        let r = reps(&[row(0, Some(10.0), 50, 0, 0), row(0, Some(30.0), 50, 0, 0), row(0, None, 50, 1, 9)], None);
        assert_eq!((r[0].fct_p50, r[0].fct_p90), (30.0, f64::INFINITY));
        // its rate is 0 in Jain's index: (5 + 5/3)² / (3·(25 + 25/9))
        let (a, b) = (5.0, 50.0 / 30.0);
        assert!((r[0].jain - (a + b) * (a + b) / (3.0 * (a * a + b * b))).abs() < 1e-12);
    }

    #[test]
    fn mesh_replications_by_hand() {
        // 100 s runs; rep 0: 30 and 10 completed; rep 1: 20 and 20
        let rows =
            [row(1, None, 25, 5, 1), row(0, None, 32, 2, 4), row(0, Some(9.0), 10, 0, 0), row(1, None, 20, 0, 3)];
        let r = reps(&rows, Some(100.0));
        assert_eq!(r.len(), 2);
        assert_eq!(r[0].completed_per_s, 0.4);
        assert_eq!(r[1].completed_per_s, 0.4);
        assert!((r[0].jain - 0.8).abs() < 1e-12); // (30+10)² / (2·(900+100)) = 1600/2000
        assert_eq!(r[1].jain, 1.0);
        assert!((r[0].retx_per_exchange - 4.0 / 42.0).abs() < 1e-12);
        assert!((r[1].retx_per_exchange - 4.0 / 45.0).abs() < 1e-12);
    }

    #[test]
    fn confidence_intervals_by_hand() {
        // 1, 2, 3: mean 2, s = 1, t(2) = 4.303, half-width 4.303/√3
        let (m, h) = mean_ci(&[1.0, 2.0, 3.0]);
        assert_eq!(m, 2.0);
        assert!((h - 4.303 / 3f64.sqrt()).abs() < 1e-12);
        assert_eq!(mean_ci(&[5.0]), (5.0, f64::INFINITY));
        assert_eq!(mean_ci(&[5.0, f64::INFINITY]).0, f64::INFINITY);
        // the approximation beyond the table: t(40) = 2.021, t(120) = 1.980 (tables)
        assert!((t975(40) - 2.021).abs() < 0.002 && (t975(120) - 1.980).abs() < 0.002);
    }

    fn measured(label: &str, mesh: bool, algos: &[(&str, &[f64])]) -> Measured {
        let rep = |v: f64| Rep {
            fct_p50: if mesh { f64::NAN } else { v },
            fct_p90: f64::NAN,
            completed_per_s: if mesh { v } else { f64::NAN },
            jain: 1.0,
            retx_per_exchange: 0.1,
        };
        Measured {
            label: label.into(),
            mesh,
            by_algorithm: algos.iter().map(|(a, v)| (a.to_string(), v.iter().map(|x| rep(*x)).collect())).collect(),
        }
    }

    #[test]
    fn regret_ranks_and_ties_by_hand() {
        let cells = rank(vec![
            // FCT: a 100, b 110 (10 % behind), c 103 (3 %), intervals of ±0 (equal replications)
            measured("w", false, &[("a", &[100.0, 100.0]), ("b", &[110.0, 110.0]), ("c", &[103.0, 103.0])]),
            // rate: a 8, b 10 (best), c 2 → a 20 %, c 80 % behind
            measured("m", true, &[("a", &[8.0, 8.0]), ("b", &[10.0, 10.0]), ("c", &[2.0, 2.0])]),
        ]);
        assert_eq!((cells[0].code.as_str(), cells[1].code.as_str()), ("W1", "M1"));
        assert_eq!((cells[0].best.as_str(), cells[1].best.as_str()), ("a", "b"));
        let r = |c: usize, i: usize| cells[c].entries[i].regret;
        assert!((r(0, 1) - 0.10).abs() < 1e-12 && (r(0, 2) - 0.03).abs() < 1e-12 && r(0, 0) == 0.0);
        assert!((r(1, 0) - 0.2).abs() < 1e-12 && (r(1, 2) - 0.8).abs() < 1e-12 && r(1, 1) == 0.0);
        assert!(!cells[0].entries[1].tied, "no spread: 110 is not 100");
        let t = standings(&cells);
        // worst regrets: a 20 % (M1), c 80 % (M1), b 10 % (W1) → b, a, c
        let order: Vec<&str> = t.iter().map(|s| s.algorithm.as_str()).collect();
        assert_eq!(order, ["b", "a", "c"]);
        assert_eq!((t[0].worst_cell.as_str(), t[0].within_3, t[0].within_5), ("W1", 1, 1));
        assert!((t[1].mean_regret - 0.1).abs() < 1e-12);
        assert_eq!((t[2].within_3, t[2].within_5), (1, 1));
        // overlapping intervals tie: 100 ± 4.303·…, 103 ± …
        let c = rank(vec![measured("w", false, &[("a", &[99.0, 100.0, 101.0]), ("b", &[102.0, 103.0, 104.0])])]);
        assert!(c[0].entries[1].tied);
    }

    #[test]
    fn a_collapsed_entrant_is_worst() {
        let cells = rank(vec![measured("w", false, &[("a", &[100.0]), ("b", &[f64::INFINITY])])]);
        assert_eq!(cells[0].best, "a");
        assert_eq!(cells[0].entries[1].regret, f64::INFINITY);
        let t = standings(&cells);
        assert_eq!(t[1].algorithm, "b");
        assert_eq!(t[1].worst_regret, f64::INFINITY);
    }
}
