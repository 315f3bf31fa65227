//! The report's plots: boxplots and CDFs with the published values drawn over them, and the
//! retransmission histograms' inline bars.

use std::collections::{BTreeMap, BTreeSet};

use super::cells::{buffer_label, CellData};
use crate::svg::{Plot, PALETTE};

/// Published values drawn over a cell's box and CDF: per cell id, (value, the quantile it is if
/// it is one, what it is and where it is published).
pub(crate) type Marks = BTreeMap<String, Vec<(f64, Option<f64>, String)>>;

/// Boxplots: x groups = buffers, one box per algorithm; `stats` gives (p10, p25, p50, p75, p90).
pub(crate) fn boxplot(
    caption: &str,
    title: &str,
    ylabel: &str,
    cells: &[&CellData],
    algos: &[String],
    stats: &dyn Fn(&CellData) -> [f64; 5],
    marks: &Marks,
) -> String {
    let buffers: BTreeSet<u64> = cells.iter().map(|c| c.buffer).collect();
    let slots = buffers.len() * algos.len();
    let mut p = Plot::new((160.0 + 26.0 * slots as f64).clamp(420.0, 980.0), 320.0);
    let all: Vec<[f64; 5]> = cells.iter().map(|c| stats(c)).filter(|s| s.iter().all(|x| x.is_finite())).collect();
    let marked: Vec<f64> =
        cells.iter().filter_map(|c| marks.get(&c.id)).flatten().map(|m| m.0).filter(|v| v.is_finite()).collect();
    let top = all.iter().map(|s| s[4]).chain(marked.iter().copied()).fold(0.0, f64::max);
    let bottom = all.iter().map(|s| s[0]).chain(marked.iter().copied()).fold(f64::INFINITY, f64::min);
    // from zero, unless the data sit far above it (then the boxes would be flat lines)
    let (lo, hi) = if top <= 0.0 {
        (0.0, 1.0)
    } else if bottom > 0.5 * top {
        let span = (top - bottom).max(top * 0.02);
        let lo = crate::svg::ticks(bottom - 0.15 * span, top, 5)[0].max(0.0);
        (lo, top + 0.1 * span)
    } else {
        (0.0, top * 1.08)
    };
    if marked.is_empty() {
        p.caption(caption);
    } else {
        p.caption(&format!("{caption} (○ published)"));
    }
    let legend: Vec<(String, &str)> =
        algos.iter().enumerate().map(|(i, a)| (a.clone(), PALETTE[i % PALETTE.len()])).collect();
    p.legend(&legend);
    p.y_axis(lo, hi, ylabel);
    let (x0, x1) = (p.x0(), p.x1());
    let group_w = (x1 - x0) / buffers.len().max(1) as f64;
    let box_w = (group_w * 0.8 / algos.len().max(1) as f64).min(28.0);
    for (gi, b) in buffers.iter().enumerate() {
        let gx = x0 + group_w * gi as f64;
        let y0 = p.y0();
        p.text(gx + group_w / 2.0, y0 + 15.0, "middle", 11.0, &buffer_label(*b));
        for (ai, a) in algos.iter().enumerate() {
            let Some(c) = cells.iter().find(|c| c.buffer == *b && &c.algo == a) else { continue };
            let s = stats(c);
            if !s.iter().all(|x| x.is_finite()) {
                continue;
            }
            let color = PALETTE[ai % PALETTE.len()];
            // the group's boxes centred in its slot
            let cx = gx + (group_w - box_w * algos.len() as f64) / 2.0 + box_w * (ai as f64 + 0.5);
            let y = |v: f64| p.ypix(v, lo, hi);
            let (y10, y25, y50, y75, y90) = (y(s[0]), y(s[1]), y(s[2]), y(s[3]), y(s[4]));
            let tip = format!(
                "{a}, {}: p10 {:.2}, p25 {:.2}, median {:.2}, p75 {:.2}, p90 {:.2}",
                buffer_label(*b),
                s[0],
                s[1],
                s[2],
                s[3],
                s[4]
            );
            p.line(cx, y90, cx, y75, "#333", 1.0);
            p.line(cx, y25, cx, y10, "#333", 1.0);
            p.line(cx - box_w * 0.25, y90, cx + box_w * 0.25, y90, "#333", 1.0);
            p.line(cx - box_w * 0.25, y10, cx + box_w * 0.25, y10, "#333", 1.0);
            p.rect((cx - box_w * 0.4, y75, box_w * 0.8, (y25 - y75).max(1.0)), color, "#333", &tip);
            // the median: dark on a white halo, visible on any fill
            p.line(cx - box_w * 0.4, y50, cx + box_w * 0.4, y50, "white", 4.5);
            p.line(cx - box_w * 0.4, y50, cx + box_w * 0.4, y50, "#111", 2.0);
            // the publication's values of the same statistics: open circles on the box's axis
            for (v, _, what) in marks.get(&c.id).into_iter().flatten() {
                if v.is_finite() {
                    let yv = p.ypix(*v, lo, hi);
                    p.circle((cx, yv, 3.5), "white", "#111", what);
                }
            }
        }
    }
    let (y0, x0b, x1b) = (p.y0(), p.x0(), p.x1());
    p.line(x0b, y0, x1b, y0, "#555", 1.0);
    p.finish(title)
}

/// At most this many points per CDF line.
const CDF_POINTS: usize = 400;

/// CDFs of FCT, one line per algorithm.
pub(crate) fn cdf(caption: &str, title: &str, cells: &[&CellData], algos: &[String], marks: &Marks) -> String {
    cdf_of(caption, title, ("flow completion time (s)", "share of clients"), cells, algos, &|c| &c.fcts, marks)
}

/// Empirical CDFs of each algorithm's `values` (sorted), one line per algorithm.
pub(crate) fn cdf_of(
    caption: &str,
    title: &str,
    (xlabel, ylabel): (&str, &str),
    cells: &[&CellData],
    algos: &[String],
    values: &dyn Fn(&CellData) -> &[f64],
    marks: &Marks,
) -> String {
    let mut p = Plot::new(460.0, 290.0);
    // published quantiles of the cells drawn, as open circles in their algorithm's colour
    let quantiles: Vec<(&CellData, f64, f64, &String)> = (cells.iter())
        .flat_map(|c| marks.get(&c.id).into_iter().flatten().map(move |m| (*c, m)))
        .filter_map(|(c, (v, q, what))| q.filter(|_| v.is_finite()).map(|q| (c, *v, q, what)))
        .collect();
    if quantiles.is_empty() {
        p.caption(caption);
    } else {
        p.caption(&format!("{caption} (○ published)"));
    }
    let legend: Vec<(String, &str)> =
        algos.iter().enumerate().map(|(i, a)| (a.clone(), PALETTE[i % PALETTE.len()])).collect();
    p.legend(&legend);
    // values may end with infinities: members of the population that never got there (the
    // line stops short of 1)
    let lo = (cells.iter().filter_map(|c| values(c).first().copied()))
        .chain(quantiles.iter().map(|m| m.1))
        .fold(f64::INFINITY, f64::min);
    let hi = (cells.iter().filter_map(|c| values(c).iter().rev().find(|x| x.is_finite()).copied()))
        .chain(quantiles.iter().map(|m| m.1))
        .fold(0.0, f64::max);
    let (lo, hi) = if lo.is_finite() && hi > lo { (lo, hi) } else { (0.0, 1.0) };
    let pad = (hi - lo) * 0.03;
    let (lo, hi) = ((lo - pad).max(0.0), hi + pad);
    p.y_axis(0.0, 1.0, ylabel);
    p.x_axis(lo, hi, xlabel);
    // a line that coincides with one drawn before (every client's FCT within a pixel of it) would
    // hide it: it is dashed, and a note under the plot says so
    let pixel = (hi - lo) / (p.x1() - p.x0());
    let coincide =
        |a: &[f64], b: &[f64]| a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x == y || (x - y).abs() <= pixel);
    let mut drawn: Vec<(&String, &CellData)> = Vec::new();
    let mut same: Vec<(String, Vec<String>)> = Vec::new();
    for (ai, a) in algos.iter().enumerate() {
        let Some(c) = cells.iter().find(|c| &c.algo == a) else { continue };
        let v = values(c);
        if v.first().is_none_or(|x| !x.is_finite()) {
            continue;
        }
        let twin = drawn.iter().find(|(_, d)| coincide(values(d), v)).map(|(name, _)| (*name).clone());
        if twin.is_none() {
            drawn.push((a, c));
        }
        // the empirical CDF's steps; beyond CDF_POINTS clients, that many evenly spaced
        // quantiles (a difference of less than a pixel at this size)
        let n = v.len();
        let m = n.min(CDF_POINTS);
        let mut pts = vec![(p.xpix(v[0], lo, hi), p.ypix(0.0, 0.0, 1.0))];
        for j in 0..m {
            let i = if m == n { j } else { j * (n - 1) / (m - 1).max(1) };
            if !v[i].is_finite() {
                break;
            }
            let x = p.xpix(v[i], lo, hi);
            pts.push((x, p.ypix(i as f64 / n as f64, 0.0, 1.0)));
            pts.push((x, p.ypix((i + 1) as f64 / n as f64, 0.0, 1.0)));
        }
        let dash = twin.is_some().then_some("7 5");
        p.polyline_dashed(&pts, PALETTE[ai % PALETTE.len()], dash);
        if let Some(t) = twin {
            match same.iter_mut().find(|(first, _)| *first == t) {
                Some((_, others)) => others.push(a.clone()),
                None => same.push((t, vec![a.clone()])),
            }
        }
    }
    for (c, v, q, what) in &quantiles {
        let color = algos.iter().position(|a| *a == c.algo).map_or("#111", |i| PALETTE[i % PALETTE.len()]);
        let (x, y) = (p.xpix(*v, lo, hi), p.ypix(*q, 0.0, 1.0));
        p.circle((x, y, 3.5), "white", color, what);
    }
    for (first, others) in same {
        let note =
            format!("{} coincide{} with {first} (dashed)", others.join(", "), if others.len() == 1 { "s" } else { "" });
        // wrapped at the plot's width (about 6 px a character)
        let width = ((p.w - p.x0()) / 6.0) as usize;
        let mut line = String::new();
        for word in note.split(' ') {
            if !line.is_empty() && line.len() + word.len() + 1 > width {
                p.h += 14.0;
                let y = p.h - 6.0;
                p.text(p.x0(), y, "start", 11.0, &std::mem::take(&mut line));
            }
            if !line.is_empty() {
                line.push(' ');
            }
            line += word;
        }
        p.h += 14.0;
        let y = p.h - 6.0;
        p.text(p.x0(), y, "start", 11.0, &line);
    }
    p.finish(title)
}

/// A bar's height (share of the full height) for a share of exchanges, on a log scale from
/// 0.1 % to 100 % (a linear one leaves every bar but the first a pixel tall): 1 → 1, 0.1 → 2/3,
/// 0.01 → 1/3; 0.1 % and less a sliver (1/20), nothing for 0.
pub(crate) fn log_height(share: f64) -> f64 {
    if share <= 0.0 {
        0.0
    } else {
        ((share.log10() + 3.0) / 3.0).clamp(0.05, 1.0)
    }
}

/// A small bar chart of a histogram (shares), bar heights on [`log_height`]'s scale.
pub(crate) fn hist_bars(shares: &[f64], title: &str) -> String {
    let mut p = Plot { w: 180.0, h: 24.0, left: 1.0, right: 1.0, top: 1.0, bottom: 1.0, body: String::new() };
    let n = shares.len().max(1) as f64;
    let bw = (p.x1() - p.x0()) / n;
    for (i, s) in shares.iter().enumerate() {
        let h = (p.y0() - p.y1()) * log_height(*s);
        let label =
            format!("{i}{} retransmission(s): {:.1} %", if i + 1 == shares.len() { "+" } else { "" }, 100.0 * s);
        p.rect((p.x0() + bw * i as f64 + 1.0, p.y0() - h, (bw - 2.0).max(1.0), h.max(0.5)), "#0072B2", "none", &label);
    }
    p.finish(title)
}

pub(crate) const HIST_COLS: usize = 9; // 0..7 and 8+

pub(crate) fn hist_shares(c: &CellData) -> Vec<f64> {
    let h: Vec<f64> = c.summary["retransmissions_hist"]
        .as_array()
        .map(|a| a.iter().map(|x| x.as_f64().unwrap_or(0.0)).collect())
        .unwrap_or_default();
    let total: f64 = h.iter().sum::<f64>().max(1.0);
    let mut out = vec![0.0; HIST_COLS];
    for (i, n) in h.iter().enumerate() {
        out[i.min(HIST_COLS - 1)] += n / total;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn histogram_bars_on_a_log_scale() {
        // (log10(share) + 3) / 3: each factor of ten a third of the height
        assert_eq!(log_height(1.0), 1.0);
        assert!((log_height(0.1) - 2.0 / 3.0).abs() < 1e-12);
        assert!((log_height(0.01) - 1.0 / 3.0).abs() < 1e-12);
        assert_eq!(log_height(0.0001), 0.05, "a sliver, still seen");
        assert_eq!(log_height(0.0), 0.0);
    }

    #[test]
    fn the_palette_has_no_yellow_and_no_black() {
        assert!(!PALETTE.contains(&"#F0E442") && !PALETTE.contains(&"#000000"));
        let distinct: BTreeSet<&str> = PALETTE.iter().copied().collect();
        assert_eq!(distinct.len(), PALETTE.len());
    }

    /// CIELAB (D65) of an sRGB `#RRGGBB`: the standard formulas, for colour distances.
    fn lab(hex: &str) -> [f64; 3] {
        let c = |i: usize| {
            let v = u8::from_str_radix(&hex[i..i + 2], 16).unwrap() as f64 / 255.0;
            if v > 0.04045 {
                ((v + 0.055) / 1.055).powf(2.4)
            } else {
                v / 12.92
            }
        };
        let (r, g, b) = (c(1), c(3), c(5));
        let x = (0.4124 * r + 0.3576 * g + 0.1805 * b) / 0.95047;
        let y = 0.2126 * r + 0.7152 * g + 0.0722 * b;
        let z = (0.0193 * r + 0.1192 * g + 0.9505 * b) / 1.08883;
        let f = |t: f64| if t > 0.008856 { t.cbrt() } else { 7.787 * t + 16.0 / 116.0 };
        [116.0 * f(y) - 16.0, 500.0 * (f(x) - f(y)), 200.0 * (f(y) - f(z))]
    }

    #[test]
    fn nine_algorithms_get_colours_far_apart() {
        // white is L* 100 and a* b* 0; the palette's blue and sky blue had been 26 apart
        assert!(lab("#FFFFFF").iter().zip([100.0, 0.0, 0.0]).all(|(a, b)| (a - b).abs() < 0.1));
        let d = |a: &str, b: &str| lab(a).iter().zip(lab(b)).map(|(x, y)| (x - y).powi(2)).sum::<f64>().sqrt();
        let first = &PALETTE[..9];
        let closest = (0..9).flat_map(|i| (i + 1..9).map(move |j| (i, j))).map(|(i, j)| d(first[i], first[j]));
        assert!(closest.fold(f64::INFINITY, f64::min) > 30.0);
        assert!(d("#0072B2", "#56B4E9") < 30.0, "the pair the thesis report had drawn alike");
    }
}
