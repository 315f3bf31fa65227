//! A few SVG primitives for the report's plots, written by hand: the statistics are computed by
//! us (netsim's type-7 quantiles), and plotting libraries' own box statistics are not trusted
//! (plotters' boxplot quartiles are known to be wrong, plotters issue #720).

use std::fmt::Write;

/// Colour-blind-safe palette: Okabe & Ito's, less their yellow (unreadable on white) and black
/// (a box's median line is dark), with Tol's wine, olive, grey and indigo, in an order that keeps
/// the first nine (the thesis report's algorithms) far apart: their closest pair (pink and
/// wine) is 30.8 apart in CIELAB, where Okabe & Ito's order had put sky blue beside blue and teal
/// 18.6 from bluish green. Sky blue, teal and green come after.
pub const PALETTE: [&str; 12] = [
    "#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#882255", "#999933", "#999999", "#332288", "#56B4E9",
    "#44AA99", "#117733",
];

/// Escapes text for XML.
pub fn esc(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// "Nice" axis ticks covering [lo, hi].
pub fn ticks(lo: f64, hi: f64, target: usize) -> Vec<f64> {
    if !lo.is_finite() || !hi.is_finite() || hi <= lo {
        return vec![lo];
    }
    let raw = (hi - lo) / target.max(1) as f64;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 2.5, 5.0, 10.0].iter().map(|m| m * mag).find(|s| *s >= raw).unwrap_or(10.0 * mag);
    let start = (lo / step).floor() * step;
    let mut v = Vec::new();
    let mut t = start;
    while t <= hi + step * 1e-9 {
        v.push((t / step).round() * step);
        t += step;
    }
    v
}

/// The labels of an axis's ticks, all with the decimals their step needs (`0.75, 1.00`, not
/// `0.75, 1`).
pub fn tick_labels(ticks: &[f64]) -> Vec<String> {
    let step = ticks.windows(2).map(|w| w[1] - w[0]).fold(f64::INFINITY, f64::min);
    let decimals = if step.is_finite() {
        (0..6).find(|&d| {
            let scaled = step * 10f64.powi(d);
            (scaled - scaled.round()).abs() < 1e-6 * scaled.abs().max(1.0)
        })
    } else {
        None
    }
    .unwrap_or(0) as usize;
    ticks.iter().map(|t| format!("{t:.decimals$}")).collect()
}

/// A plot under construction: a frame of `w`×`h` pixels with margins.
pub struct Plot {
    pub w: f64,
    pub h: f64,
    pub left: f64,
    pub right: f64,
    pub top: f64,
    pub bottom: f64,
    pub body: String,
}

impl Plot {
    pub fn new(w: f64, h: f64) -> Self {
        Plot { w, h, left: 60.0, right: 12.0, top: 46.0, bottom: 46.0, body: String::new() }
    }
    /// A visible caption at the top.
    pub fn caption(&mut self, s: &str) {
        let x = self.x0();
        let _ = write!(self.body, r#"<text x="{x:.1}" y="15" font-size="12" font-weight="600">{}</text>"#, esc(s));
    }
    pub fn x0(&self) -> f64 {
        self.left
    }
    pub fn x1(&self) -> f64 {
        self.w - self.right
    }
    pub fn y0(&self) -> f64 {
        self.h - self.bottom
    }
    pub fn y1(&self) -> f64 {
        self.top
    }
    /// Maps a value in [lo, hi] to the vertical pixel.
    pub fn ypix(&self, v: f64, lo: f64, hi: f64) -> f64 {
        let f = if hi > lo { (v - lo) / (hi - lo) } else { 0.5 };
        self.y0() - f * (self.y0() - self.y1())
    }
    /// Maps a value in [lo, hi] to the horizontal pixel.
    pub fn xpix(&self, v: f64, lo: f64, hi: f64) -> f64 {
        let f = if hi > lo { (v - lo) / (hi - lo) } else { 0.5 };
        self.x0() + f * (self.x1() - self.x0())
    }
    pub fn line(&mut self, x1: f64, y1: f64, x2: f64, y2: f64, stroke: &str, width: f64) {
        let _ = write!(
            self.body,
            r#"<line x1="{x1:.1}" y1="{y1:.1}" x2="{x2:.1}" y2="{y2:.1}" stroke="{stroke}" stroke-width="{width}"/>"#
        );
    }
    /// A rectangle `(x, y, width, height)` with a tooltip.
    pub fn rect(&mut self, (x, y, w, h): (f64, f64, f64, f64), fill: &str, stroke: &str, title: &str) {
        let _ = write!(
            self.body,
            r#"<rect x="{x:.1}" y="{y:.1}" width="{w:.1}" height="{h:.1}" fill="{fill}" stroke="{stroke}"><title>{}</title></rect>"#,
            esc(title)
        );
    }
    pub fn text(&mut self, x: f64, y: f64, anchor: &str, size: f64, s: &str) {
        let _ = write!(
            self.body,
            r#"<text x="{x:.1}" y="{y:.1}" text-anchor="{anchor}" font-size="{size}">{}</text>"#,
            esc(s)
        );
    }
    pub fn polyline(&mut self, pts: &[(f64, f64)], stroke: &str) {
        self.polyline_dashed(pts, stroke, None);
    }
    /// A polyline, dashed as `dash` says (an SVG `stroke-dasharray`, e.g. "6 4").
    pub fn polyline_dashed(&mut self, pts: &[(f64, f64)], stroke: &str, dash: Option<&str>) {
        let p: Vec<String> = pts.iter().map(|(x, y)| format!("{x:.1},{y:.1}")).collect();
        let dash = dash.map_or(String::new(), |d| format!(r#" stroke-dasharray="{d}""#));
        let _ = write!(
            self.body,
            r#"<polyline fill="none" stroke="{stroke}" stroke-width="1.6"{dash} points="{}"/>"#,
            p.join(" ")
        );
    }
    /// A circle with a tooltip.
    pub fn circle(&mut self, (cx, cy, r): (f64, f64, f64), fill: &str, stroke: &str, title: &str) {
        let _ = write!(
            self.body,
            r#"<circle cx="{cx:.1}" cy="{cy:.1}" r="{r:.1}" fill="{fill}" stroke="{stroke}"><title>{}</title></circle>"#,
            esc(title)
        );
    }
    /// Horizontal grid and labels of a vertical axis over [lo, hi].
    pub fn y_axis(&mut self, lo: f64, hi: f64, label: &str) {
        let ts: Vec<f64> = ticks(lo, hi, 5).into_iter().filter(|t| *t >= lo - 1e-9 && *t <= hi + 1e-9).collect();
        for (t, label) in ts.iter().zip(tick_labels(&ts)) {
            let y = self.ypix(*t, lo, hi);
            let (x0, x1) = (self.x0(), self.x1());
            self.line(x0, y, x1, y, "#e3e3e3", 1.0);
            self.text(x0 - 6.0, y + 4.0, "end", 11.0, &label);
        }
        let (x0, y0, y1) = (self.x0(), self.y0(), self.y1());
        self.line(x0, y0, x0, y1, "#555", 1.0);
        let _ = write!(
            self.body,
            r#"<text x="14" y="{:.1}" text-anchor="middle" font-size="12" transform="rotate(-90 14 {:.1})">{}</text>"#,
            (y0 + y1) / 2.0,
            (y0 + y1) / 2.0,
            esc(label)
        );
    }
    /// Vertical grid and labels of a horizontal axis over [lo, hi].
    pub fn x_axis(&mut self, lo: f64, hi: f64, label: &str) {
        let ts: Vec<f64> = ticks(lo, hi, 6).into_iter().filter(|t| *t >= lo - 1e-9 && *t <= hi + 1e-9).collect();
        for (t, label) in ts.iter().zip(tick_labels(&ts)) {
            let x = self.xpix(*t, lo, hi);
            let (y0, y1) = (self.y0(), self.y1());
            self.line(x, y0, x, y1, "#e3e3e3", 1.0);
            self.text(x, y0 + 15.0, "middle", 11.0, &label);
        }
        let (x0, x1, y0) = (self.x0(), self.x1(), self.y0());
        self.line(x0, y0, x1, y0, "#555", 1.0);
        self.text((x0 + x1) / 2.0, self.h - 8.0, "middle", 12.0, label);
    }
    /// A legend across the top, wrapped into rows; the plot area moves down below it. Call it
    /// before drawing anything that depends on the plot area.
    pub fn legend(&mut self, entries: &[(String, &str)]) {
        let (mut x, mut y) = (self.x0(), 24.0);
        for (name, color) in entries {
            let w = 24.0 + 6.5 * name.len() as f64;
            if x + w > self.x1() && x > self.x0() {
                x = self.x0();
                y += 15.0;
            }
            self.rect((x, y, 10.0, 10.0), color, color, name);
            self.text(x + 14.0, y + 9.0, "start", 11.0, name);
            x += w;
        }
        self.top = y + 22.0;
        self.h += y - 24.0;
    }
    /// The finished SVG element.
    pub fn finish(self, title: &str) -> String {
        format!(
            r#"<svg class="plot" xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" role="img" aria-label="{t}"><title>{t}</title><rect width="100%" height="100%" fill="white"/>{body}</svg>"#,
            w = self.w,
            h = self.h,
            t = esc(title),
            body = self.body
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nice_ticks() {
        assert_eq!(ticks(0.0, 100.0, 5), vec![0.0, 20.0, 40.0, 60.0, 80.0, 100.0]);
        assert_eq!(ticks(0.0, 1.0, 4), vec![0.0, 0.25, 0.5, 0.75, 1.0]);
        assert_eq!(ticks(30.0, 70.0, 4), vec![30.0, 40.0, 50.0, 60.0, 70.0]);
        assert_eq!(esc("<a & b>"), "&lt;a &amp; b&gt;");
        // one format per axis, from its step
        assert_eq!(tick_labels(&[0.0, 0.25, 0.5, 0.75, 1.0]), ["0.00", "0.25", "0.50", "0.75", "1.00"]);
        assert_eq!(tick_labels(&[0.6, 0.8, 1.0]), ["0.6", "0.8", "1.0"]);
        assert_eq!(tick_labels(&[0.0, 500.0, 1000.0]), ["0", "500", "1000"]);
        assert_eq!(tick_labels(&[3.0]), ["3"], "a lone tick: no step, no decimals");
    }
}
