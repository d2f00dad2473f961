//! A chart as data ([`Figure`]: panels of lines, confidence bands, stacked areas,
//! bars, markers, heatmap tiles and coloured dots) and its rendering, once for SVG
//! and once for PNG through the same generic code.
//!
//! The chart builders (`timeline`, `distribution`, `credit`) only decide what to
//! show; this file alone decides how it looks, so every chart shares one layout: a
//! bold title on top, panels in a grid, and one legend for the whole figure in a
//! strip on the right, outside the plotting areas, where it can never hide data.
//! A panel without data says so in its middle instead of drawing an empty frame.

use super::font::FAMILY;
use super::format;
use plotters::coord::Shift;
use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint, Ranged};
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// Why plotters could not draw or write a chart. Its errors are generic over the
/// backend (SVG text, PNG bitmap), so the error is kept as plotters describes it.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct DrawError(String);

impl DrawError {
    fn new(e: impl std::fmt::Debug) -> Self {
        DrawError(format!("{e:?}"))
    }
}

/// Width of the legend strip, px.
const LEGEND_W: u32 = 250;
/// Height of the title band, px.
const TITLE_H: u32 = 48;
/// Height of a blank panel's strip in a stacked figure.
const STRIP_H: u32 = 56;

/// Colours of projects (and of series when a chart has one project), in order: the
/// "Tableau 10" palette, distinct for most colour-blind readers and in greyscale.
pub(crate) const PALETTE: [RGBColor; 10] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
    RGBColor(188, 189, 34),
    RGBColor(23, 190, 207),
];

/// The colour of the `i`-th project or series.
pub(crate) fn color(i: usize) -> RGBColor {
    PALETTE[i % PALETTE.len()]
}

/// The palette's colours by name, for charts whose series have a fixed meaning
/// (server states, deadline and percentile marks).
pub(crate) const BLUE: RGBColor = PALETTE[0];
pub(crate) const ORANGE: RGBColor = PALETTE[1];
pub(crate) const GREEN: RGBColor = PALETTE[2];
pub(crate) const RED: RGBColor = PALETTE[3];
pub(crate) const PURPLE: RGBColor = PALETTE[4];
pub(crate) const BROWN: RGBColor = PALETTE[5];

pub(crate) const INK: RGBColor = RGBColor(30, 30, 30);
pub(crate) const GREY: RGBColor = RGBColor(120, 120, 120);
/// Tiles and dots without a value.
const NO_VALUE: RGBColor = RGBColor(222, 222, 222);

/// The colour of `t` in 0..=1 on the sequential scale (clamped; NaN is grey):
/// viridis (dark purple → blue → green → yellow), readable for colour-blind readers,
/// in greyscale (it grows lighter throughout), and on screen and paper alike; from
/// plotters' `colormaps`.
pub(crate) fn viridis(t: f64) -> RGBColor {
    use plotters::style::colors::colormaps::{ColorMap, ViridisRGB};
    if !t.is_finite() {
        return NO_VALUE;
    }
    ViridisRGB.get_color(t.clamp(0.0, 1.0))
}

/// How values map to colours in [`Layer::Tiles`] and [`Layer::Dots`]: `lo` is the
/// darkest, `hi` the lightest colour of [`viridis`]. The legend shows the scale as a
/// colour bar titled `label`, with tick values.
#[derive(Clone, Debug, PartialEq)]
pub struct ColorScale {
    pub label: String,
    pub lo: f64,
    pub hi: f64,
}

impl ColorScale {
    /// The colour of `v`; the middle of the scale when `lo == hi`, grey for NaN.
    pub(crate) fn color(&self, v: f64) -> RGBColor {
        let span = self.hi - self.lo;
        if v.is_nan() {
            NO_VALUE
        } else if span > 0.0 {
            viridis((v - self.lo) / span)
        } else {
            viridis(0.5)
        }
    }
}

/// One heatmap cell: the unit square centred on (`x`, `y`), coloured by `value`
/// (NaN: no value, grey), with `text` written in it, and with a dark frame inside
/// its edge when `outlined` (cells that meet a sweep's constraints; white on dark
/// cells).
#[derive(Clone, Debug)]
pub struct Tile {
    pub x: f64,
    pub y: f64,
    pub value: f64,
    pub text: String,
    pub outlined: bool,
}

/// The width of a tile's frame, px.
const OUTLINE_PX: u32 = 4;

/// What a panel draws.
#[derive(Clone, Debug)]
pub enum Layer {
    /// A polyline; NaN `y` values break it into segments (gaps).
    Line {
        label: String,
        color: RGBColor,
        points: Vec<(f64, f64)>,
        dashed: bool,
        /// Small circles on the points (for short series).
        markers: bool,
    },
    /// Areas stacked from 0 upwards at the shared `xs`, in order (first at the
    /// bottom); the legend lists them top first, as they appear.
    Stack {
        xs: Vec<f64>,
        layers: Vec<(String, RGBColor, Vec<f64>)>,
    },
    /// Bars from 0 up to each `(lower, upper, height)`.
    Bars {
        label: String,
        color: RGBColor,
        bins: Vec<(f64, f64, f64)>,
    },
    /// A vertical marker line across the panel at `x`.
    VLine {
        label: String,
        color: RGBColor,
        x: f64,
        dashed: bool,
    },
    /// A translucent band from `lo` to `hi` at each `(x, lo, hi)` (a confidence
    /// interval around a line); a non-finite bound breaks it, and a piece with a
    /// single x is drawn as an error bar. Drawn under lines. Its legend sample is
    /// grey whatever `color`, so bands of several lines with one label share one
    /// legend entry.
    Band {
        label: String,
        color: RGBColor,
        points: Vec<(f64, f64, f64)>,
    },
    /// A legend entry with nothing drawn: a count the panel's axes cannot show (the
    /// results that never came back have no slack).
    Key { label: String, color: RGBColor },
    /// A heatmap: unit squares coloured by value on `scale`, each with its text.
    Tiles { scale: ColorScale, tiles: Vec<Tile> },
    /// Dots at `(x, y)` coloured by `value` on `scale` (a heatmap of points that do
    /// not form a grid).
    Dots {
        scale: ColorScale,
        points: Vec<(f64, f64, f64)>,
    },
}

impl Layer {
    /// The x and y extents of the layer's data (NaN skipped).
    fn extent(&self) -> Option<((f64, f64), (f64, f64))> {
        let mut xs = Vec::new();
        let mut ys = Vec::new();
        match self {
            Layer::Line { points, .. } => {
                for &(x, y) in points {
                    if x.is_finite() && y.is_finite() {
                        xs.push(x);
                        ys.push(y);
                    }
                }
            }
            Layer::Stack { xs: x, layers } => {
                xs.extend(x.iter().copied());
                for (i, _) in x.iter().enumerate() {
                    ys.push(
                        layers
                            .iter()
                            .map(|l| l.2.get(i).copied().unwrap_or(0.0))
                            .sum(),
                    );
                }
            }
            Layer::Bars { bins, .. } => {
                for &(lo, hi, h) in bins {
                    xs.extend([lo, hi]);
                    ys.push(h);
                }
            }
            Layer::VLine { x, .. } => xs.push(*x),
            Layer::Key { .. } => {}
            Layer::Band { points, .. } => {
                for &(x, lo, hi) in points {
                    if x.is_finite() && lo.is_finite() && hi.is_finite() {
                        xs.push(x);
                        ys.extend([lo, hi]);
                    }
                }
            }
            Layer::Tiles { tiles, .. } => {
                for t in tiles {
                    xs.extend([t.x - 0.5, t.x + 0.5]);
                    ys.extend([t.y - 0.5, t.y + 0.5]);
                }
            }
            Layer::Dots { points, .. } => {
                for &(x, y, _) in points {
                    if x.is_finite() && y.is_finite() {
                        xs.push(x);
                        ys.push(y);
                    }
                }
            }
        }
        let range = |v: &[f64]| {
            let lo = v.iter().copied().fold(f64::INFINITY, f64::min);
            let hi = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            (lo <= hi).then_some((lo, hi))
        };
        Some((range(&xs)?, range(&ys).unwrap_or((0.0, 0.0))))
    }

    /// Whether the layer draws nothing but zeros (or nothing): a marker line alone
    /// says nothing about the data.
    fn is_blank(&self) -> bool {
        match self {
            Layer::Line { points, .. } => points.iter().all(|p| !p.1.is_finite() || p.1 == 0.0),
            Layer::VLine { .. } | Layer::Key { .. } => true,
            _ => !self.has_data(),
        }
    }

    /// Whether the layer has something to draw.
    fn has_data(&self) -> bool {
        match self {
            Layer::Line { points, .. } => points.iter().any(|p| p.1.is_finite()),
            Layer::Stack { xs, layers } => !xs.is_empty() && !layers.is_empty(),
            Layer::Bars { bins, .. } => !bins.is_empty(),
            Layer::VLine { .. } | Layer::Key { .. } => false,
            Layer::Band { points, .. } => points.iter().any(|p| p.1.is_finite() && p.2.is_finite()),
            Layer::Tiles { tiles, .. } => tiles.iter().any(|t| t.value.is_finite()),
            Layer::Dots { points, .. } => points.iter().any(|p| p.2.is_finite()),
        }
    }
}

/// Opacity of a band's fill.
const BAND_ALPHA: f64 = 0.2;

/// Relative luminance of a colour, 0 (black) to 1 (white): dark cells get white
/// text.
fn luminance(c: RGBColor) -> f64 {
    (0.2126 * c.0 as f64 + 0.7152 * c.1 as f64 + 0.0722 * c.2 as f64) / 255.0
}

/// One plotting area with its axes.
#[derive(Clone, Debug, Default)]
pub struct Panel {
    /// Shown above the panel when the figure has several.
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    /// Fixed ranges; by default the data's, y from 0 with some headroom.
    pub x_range: Option<(f64, f64)>,
    pub y_range: Option<(f64, f64)>,
    pub layers: Vec<Layer>,
    /// Shown in the middle of the panel when it has no data to draw.
    pub no_data: String,
    /// Shown at the top of the plotting area when not empty (e.g. "all zero").
    pub note: String,
    /// Fixed ticks with their labels (a categorical axis: positions 0, 1, … named
    /// by the categories); empty: round numbers chosen for the range.
    pub x_ticks: Vec<(f64, String)>,
    pub y_ticks: Vec<(f64, String)>,
}

impl Panel {
    pub fn new(title: &str, x_label: &str, y_label: &str) -> Panel {
        Panel {
            title: title.into(),
            x_label: x_label.into(),
            y_label: y_label.into(),
            no_data: "no data".into(),
            ..Panel::default()
        }
    }

    pub(crate) fn has_data(&self) -> bool {
        self.layers.iter().any(Layer::has_data)
    }

    /// Whether the panel has nothing to show: no data, or zero throughout. In a
    /// figure of several stacked panels it shrinks to a strip that says so, rather
    /// than taking a full row of empty axes.
    pub(crate) fn is_blank(&self) -> bool {
        self.layers.iter().all(Layer::is_blank)
    }

    /// What a blank panel's strip says after its title.
    fn blank_reason(&self) -> &str {
        if !self.has_data() {
            &self.no_data
        } else if !self.note.is_empty() {
            &self.note
        } else {
            "zero throughout"
        }
    }

    /// The x and y ranges the panel is drawn over: its fixed ones, else its data's,
    /// y from 0 with some headroom.
    pub(crate) fn ranges(&self) -> ((f64, f64), (f64, f64)) {
        let mut x = (f64::INFINITY, f64::NEG_INFINITY);
        let mut y = (0.0f64, f64::NEG_INFINITY);
        for ((x0, x1), (y0, y1)) in self.layers.iter().filter_map(Layer::extent) {
            x = (x.0.min(x0), x.1.max(x1));
            y = (y.0.min(y0), y.1.max(y1));
        }
        let x = self.x_range.unwrap_or(if x.0 < x.1 {
            x
        } else if x.0.is_finite() {
            (x.0 - 1.0, x.0 + 1.0)
        } else {
            (0.0, 1.0)
        });
        let y = self.y_range.unwrap_or_else(|| {
            let hi = if y.1 > y.0 { y.1 } else { y.0 + 1.0 };
            let span = hi - y.0;
            (
                if y.0 < 0.0 { y.0 - 0.05 * span } else { y.0 },
                hi + 0.08 * span,
            )
        });
        (x, y)
    }
}

/// A chart: a name (the file stem), a title, panels, and the caption the report
/// shows under it.
#[derive(Clone, Debug)]
pub struct Figure {
    pub name: String,
    pub title: String,
    pub caption: String,
    pub panels: Vec<Panel>,
    /// Panels per row.
    pub columns: usize,
}

/// One legend entry: how its sample is drawn.
#[derive(Clone, Debug, PartialEq)]
enum Sample {
    Line {
        dashed: bool,
    },
    Fill,
    /// A translucent fill (a band).
    Shade,
    VLine {
        dashed: bool,
    },
    /// A colour bar from `lo` to `hi` (its label is the bar's title).
    Scale {
        lo: f64,
        hi: f64,
    },
}

impl Figure {
    pub fn new(name: &str, title: &str, caption: &str, panels: Vec<Panel>) -> Figure {
        Figure {
            name: name.into(),
            title: title.into(),
            caption: caption.into(),
            panels,
            columns: 1,
        }
    }

    /// Whether the panels are stacked in one column, where blank panels shrink to
    /// strips ([`Panel::is_blank`]).
    fn stacked(&self) -> bool {
        self.columns.max(1) == 1 && self.panels.len() > 1
    }

    /// The height of each row of a stacked figure: 300 px, or [`STRIP_H`] for a
    /// blank panel.
    fn row_heights(&self) -> Vec<u32> {
        self.panels
            .iter()
            .map(|p| if p.is_blank() { STRIP_H } else { 300 })
            .collect()
    }

    /// Size in pixels: 1000 × 600 for one panel; more panels add rows of 300 px
    /// (a blank panel of a stacked figure, [`STRIP_H`]).
    pub fn size(&self) -> (u32, u32) {
        let cols = self.columns.max(1);
        let rows = self.panels.len().div_ceil(cols).max(1) as u32;
        let w = if cols > 1 { 1400 } else { 1000 };
        let h = if rows == 1 {
            600
        } else if self.stacked() {
            TITLE_H + 20 + self.row_heights().iter().sum::<u32>()
        } else {
            TITLE_H + 20 + rows * 300
        };
        (w, h)
    }

    /// The legend: every labelled layer of every panel, once, in order.
    fn legend(&self) -> Vec<(String, RGBColor, Sample)> {
        let mut out: Vec<(String, RGBColor, Sample)> = Vec::new();
        let mut add = |label: &str, color: RGBColor, sample: Sample| {
            let e = (label.to_string(), color, sample);
            if !label.is_empty() && !out.contains(&e) {
                out.push(e);
            }
        };
        for p in &self.panels {
            for l in &p.layers {
                match l {
                    Layer::Line {
                        label,
                        color,
                        dashed,
                        points,
                        ..
                    } if points.iter().any(|p| p.1.is_finite()) => {
                        add(label, *color, Sample::Line { dashed: *dashed })
                    }
                    Layer::Line { .. } => {}
                    Layer::Stack { layers, .. } => {
                        for (label, color, _) in layers.iter().rev() {
                            add(label, *color, Sample::Fill);
                        }
                    }
                    Layer::Bars { label, color, bins } if !bins.is_empty() => {
                        add(label, *color, Sample::Fill)
                    }
                    Layer::Bars { .. } => {}
                    Layer::Key { label, color } => add(label, *color, Sample::Fill),
                    Layer::VLine {
                        label,
                        color,
                        dashed,
                        ..
                    } => add(label, *color, Sample::VLine { dashed: *dashed }),
                    Layer::Band { label, points, .. }
                        if points.iter().any(|p| p.1.is_finite() && p.2.is_finite()) =>
                    {
                        add(label, GREY, Sample::Shade)
                    }
                    Layer::Band { .. } => {}
                    Layer::Tiles { scale, .. } | Layer::Dots { scale, .. } => add(
                        &scale.label,
                        INK,
                        Sample::Scale {
                            lo: scale.lo,
                            hi: scale.hi,
                        },
                    ),
                }
            }
        }
        out
    }

    /// The chart as an SVG document.
    pub(crate) fn to_svg(&self) -> Result<String, DrawError> {
        let mut svg = String::new();
        {
            let root = SVGBackend::with_string(&mut svg, self.size()).into_drawing_area();
            self.draw(&root)?;
            root.present().map_err(DrawError::new)?;
        }
        Ok(svg)
    }

    /// Writes the chart as a PNG file.
    pub(crate) fn write_png(&self, path: &std::path::Path) -> Result<(), DrawError> {
        let root = BitMapBackend::new(path, self.size()).into_drawing_area();
        self.draw(&root)?;
        root.present().map_err(DrawError::new)
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), DrawError> {
        root.fill(&WHITE).map_err(DrawError::new)?;
        let (w, _) = root.dim_in_pixel();
        let (title_area, body) = root.split_vertically(TITLE_H);
        title_area
            .draw_text(
                &self.title,
                &TextStyle::from((FAMILY, 22, FontStyle::Bold).into_font())
                    .color(&INK)
                    .pos(Pos::new(HPos::Center, VPos::Center)),
                (w as i32 / 2, TITLE_H as i32 / 2 + 2),
            )
            .map_err(DrawError::new)?;
        let (grid, legend_area) = body.split_horizontally(w - LEGEND_W);
        let cols = self.columns.max(1);
        let rows = self.panels.len().div_ceil(cols).max(1);
        let cells = if self.stacked() {
            let breaks: Vec<i32> = self
                .row_heights()
                .iter()
                .scan(0, |y, h| {
                    *y += *h as i32;
                    Some(*y)
                })
                .collect();
            grid.split_by_breakpoints::<i32, i32, _, _>([], &breaks[..breaks.len() - 1])
        } else {
            grid.split_evenly((rows, cols))
        };
        let several = self.panels.len() > 1;
        for (panel, area) in self.panels.iter().zip(&cells) {
            if self.stacked() && panel.is_blank() {
                draw_strip(area, panel)?;
            } else {
                draw_panel(area, panel, several)?;
            }
        }
        draw_legend(&legend_area, &self.legend())
    }
}

/// Splits `text` into lines no wider than `width` px at `style`.
fn wrap<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    text: &str,
    style: &TextStyle,
    width: u32,
) -> Vec<String> {
    let fits = |s: &str| {
        area.estimate_text_size(s, style)
            .map_or(true, |(w, _)| w <= width)
    };
    let mut lines: Vec<String> = Vec::new();
    let mut line = String::new();
    for word in text.split(' ') {
        let candidate = if line.is_empty() {
            word.to_string()
        } else {
            format!("{line} {word}")
        };
        // A short token ("h", "%)", "=") stays with the word before it.
        if fits(&candidate) || line.is_empty() || word.chars().count() <= 2 {
            line = candidate;
        } else {
            lines.push(std::mem::take(&mut line));
            line = word.to_string();
        }
    }
    if !line.is_empty() {
        lines.push(line);
    }
    lines
}

fn draw_legend<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    entries: &[(String, RGBColor, Sample)],
) -> Result<(), DrawError> {
    let style = TextStyle::from((FAMILY, 14).into_font())
        .color(&INK)
        .pos(Pos::new(HPos::Left, VPos::Center));
    let (_, h) = area.dim_in_pixel();
    let line_h = 18;
    let mut y = 40i32;
    for (label, color, sample) in entries {
        if let Sample::Scale { lo, hi } = sample {
            y = draw_color_bar(area, label, *lo, *hi, y)?;
            continue;
        }
        let lines = wrap(area, label, &style, LEGEND_W - 60);
        if y + line_h * lines.len() as i32 > h as i32 - 10 {
            area.draw_text("…", &style, (48, y))
                .map_err(DrawError::new)?;
            break;
        }
        let (x0, x1) = (10, 40);
        match sample {
            Sample::Line { dashed } => {
                let style = color.stroke_width(3);
                if *dashed {
                    for (a, b) in [(x0, x0 + 8), (x0 + 12, x0 + 20), (x0 + 24, x1)] {
                        area.draw(&PathElement::new(vec![(a, y), (b, y)], style))
                            .map_err(DrawError::new)?;
                    }
                } else {
                    area.draw(&PathElement::new(vec![(x0, y), (x1, y)], style))
                        .map_err(DrawError::new)?;
                }
            }
            Sample::Fill => {
                area.draw(&Rectangle::new([(x0, y - 7), (x1, y + 7)], color.filled()))
                    .map_err(DrawError::new)?;
            }
            Sample::Shade => {
                area.draw(&Rectangle::new(
                    [(x0, y - 7), (x1, y + 7)],
                    color.mix(BAND_ALPHA + 0.1).filled(),
                ))
                .map_err(DrawError::new)?;
            }
            Sample::Scale { .. } => {}
            Sample::VLine { dashed } => {
                let style = color.stroke_width(3);
                let x = (x0 + x1) / 2;
                if *dashed {
                    for (a, b) in [(y - 8, y - 3), (y + 1, y + 8)] {
                        area.draw(&PathElement::new(vec![(x, a), (x, b)], style))
                            .map_err(DrawError::new)?;
                    }
                } else {
                    area.draw(&PathElement::new(vec![(x, y - 8), (x, y + 8)], style))
                        .map_err(DrawError::new)?;
                }
            }
        }
        for (i, l) in lines.iter().enumerate() {
            area.draw_text(l, &style, (48, y + i as i32 * line_h))
                .map_err(DrawError::new)?;
        }
        y += line_h * lines.len() as i32 + 8;
    }
    Ok(())
}

/// A numeric axis from `lo` to `hi` whose ticks are plotters' round numbers, or,
/// for a categorical axis, the given positions (thinned to every k-th when there
/// are more than fit).
struct Axis {
    inner: RangedCoordf64,
    ticks: Vec<f64>,
}

impl Axis {
    fn new(lo: f64, hi: f64, ticks: &[(f64, String)]) -> Axis {
        Axis {
            inner: (lo..hi).into(),
            ticks: ticks.iter().map(|t| t.0).collect(),
        }
    }
}

impl Ranged for Axis {
    type FormatOption = DefaultFormatting;
    type ValueType = f64;

    fn map(&self, v: &f64, limit: (i32, i32)) -> i32 {
        self.inner.map(v, limit)
    }

    fn key_points<H: KeyPointHint>(&self, hint: H) -> Vec<f64> {
        if self.ticks.is_empty() {
            return self.inner.key_points(hint);
        }
        if hint.weight().allow_light_points() {
            return Vec::new();
        }
        let step = self
            .ticks
            .len()
            .div_ceil(hint.max_num_points().max(1))
            .max(1);
        self.ticks.iter().step_by(step).copied().collect()
    }

    fn range(&self) -> std::ops::Range<f64> {
        self.inner.range()
    }
}

/// The label of the tick at `v`: its category's name on a categorical axis, else
/// the number formatted for an axis reaching `axis_max`.
fn tick_label(v: f64, axis_max: f64, ticks: &[(f64, String)]) -> String {
    if ticks.is_empty() {
        return format::tick(v, axis_max);
    }
    ticks
        .iter()
        .find(|t| (t.0 - v).abs() < 1e-9)
        .map(|t| t.1.clone())
        .unwrap_or_default()
}

/// About `n` round values (multiples of 1, 2 or 5 × 10^k) from `lo` to `hi`, and
/// their step; just `lo` (step 0) when the range is empty.
pub(crate) fn nice_ticks(lo: f64, hi: f64, n: usize) -> (Vec<f64>, f64) {
    if !(lo.is_finite() && hi.is_finite()) || hi <= lo {
        return (vec![lo], 0.0);
    }
    let raw = (hi - lo) / n.max(1) as f64;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * mag);
    let first = (lo / step).ceil() as i64;
    let last = (hi / step + 1e-9).floor() as i64;
    // Multiples of the step, computed from integers so 0.3 is not 0.30000000000000004.
    let ticks = (first..=last)
        .map(|k| {
            if step >= 1.0 {
                k as f64 * step
            } else {
                k as f64 / (1.0 / step).round()
            }
        })
        .collect();
    (ticks, step)
}

/// Height of the legend's colour bar, px.
const BAR_H: i32 = 220;

/// Draws the colour bar of a [`ColorScale`] at `y` in the legend strip: its title,
/// the bar (high on top) with five tick values, and which colour is high. Returns
/// the `y` below it.
fn draw_color_bar<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    label: &str,
    lo: f64,
    hi: f64,
    mut y: i32,
) -> Result<i32, DrawError> {
    let style = TextStyle::from((FAMILY, 14).into_font())
        .color(&INK)
        .pos(Pos::new(HPos::Left, VPos::Center));
    let line_h = 18;
    for l in wrap(area, label, &style, LEGEND_W - 20) {
        area.draw_text(&l, &style, (10, y))
            .map_err(DrawError::new)?;
        y += line_h;
    }
    y += 4;
    let (x0, x1) = (12, 36);
    // Thin strips from the top (hi) down (lo), 2 px each.
    let strips = BAR_H / 2;
    for k in 0..strips {
        let t = 1.0 - (k as f64 + 0.5) / strips as f64;
        let top = y + 2 * k;
        area.draw(&Rectangle::new(
            [(x0, top), (x1, top + 2)],
            viridis(t).filled(),
        ))
        .map_err(DrawError::new)?;
    }
    area.draw(&Rectangle::new(
        [(x0, y), (x1, y + BAR_H)],
        GREY.stroke_width(1),
    ))
    .map_err(DrawError::new)?;
    let (ticks, step) = nice_ticks(lo, hi, 5);
    let max = lo.abs().max(hi.abs());
    for v in ticks {
        let t = if hi > lo { (v - lo) / (hi - lo) } else { 0.5 };
        let ty = y + ((1.0 - t) * BAR_H as f64).round() as i32;
        area.draw(&PathElement::new(
            vec![(x1, ty), (x1 + 5, ty)],
            GREY.stroke_width(1),
        ))
        .map_err(DrawError::new)?;
        let label = if max >= 1e4 || step <= 0.0 {
            format::tick(v, max)
        } else {
            let decimals = (-step.log10().floor()).max(0.0) as usize;
            format::trim(v, decimals)
        };
        area.draw_text(&label, &style, (x1 + 9, ty))
            .map_err(DrawError::new)?;
    }
    y += BAR_H + 20;
    for l in ["yellow = high", "dark purple = low"] {
        area.draw_text(l, &style, (10, y)).map_err(DrawError::new)?;
        y += line_h;
    }
    Ok(y + 8)
}

/// A blank panel of a stacked figure: its title and why it is blank, on one line.
fn draw_strip<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    panel: &Panel,
) -> Result<(), DrawError> {
    let (w, h) = area.dim_in_pixel();
    let bold = TextStyle::from((FAMILY, 16, FontStyle::Bold).into_font())
        .color(&INK)
        .pos(Pos::new(HPos::Center, VPos::Bottom));
    area.draw_text(&panel.title, &bold, (w as i32 / 2, h as i32 / 2))
        .map_err(DrawError::new)?;
    let grey = TextStyle::from((FAMILY, 15).into_font())
        .color(&GREY)
        .pos(Pos::new(HPos::Center, VPos::Top));
    area.draw_text(
        panel.blank_reason(),
        &grey,
        (w as i32 / 2, h as i32 / 2 + 4),
    )
    .map_err(DrawError::new)
}

fn draw_panel<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    panel: &Panel,
    with_title: bool,
) -> Result<(), DrawError> {
    let ((x0, x1), (y0, y1)) = panel.ranges();
    let mut builder = ChartBuilder::on(area);
    builder
        .margin_left(8)
        .margin_right(16)
        .margin_top(6)
        .margin_bottom(6)
        .x_label_area_size(44)
        .y_label_area_size(78);
    if with_title {
        builder.caption(&panel.title, (FAMILY, 16, FontStyle::Bold).into_font());
    }
    let mut chart = builder
        .build_cartesian_2d(
            Axis::new(x0, x1, &panel.x_ticks),
            Axis::new(y0, y1, &panel.y_ticks),
        )
        .map_err(DrawError::new)?;
    let x_max = x0.abs().max(x1.abs());
    let y_max = y0.abs().max(y1.abs());
    let x_tick = |v: &f64| tick_label(*v, x_max, &panel.x_ticks);
    let y_tick = |v: &f64| tick_label(*v, y_max, &panel.y_ticks);
    chart
        .configure_mesh()
        .x_desc(&panel.x_label)
        .y_desc(&panel.y_label)
        .x_label_formatter(&x_tick)
        .y_label_formatter(&y_tick)
        .x_labels(10)
        .y_labels(6)
        .label_style((FAMILY, 13).into_font().color(&INK))
        .axis_desc_style((FAMILY, 14).into_font().color(&INK))
        .bold_line_style(RGBColor(225, 225, 225).stroke_width(1))
        .light_line_style(TRANSPARENT)
        .axis_style(GREY.stroke_width(1))
        .draw()
        .map_err(DrawError::new)?;

    if !panel.note.is_empty() {
        let plot_area = chart.plotting_area().strip_coord_spec();
        let (w, _) = plot_area.dim_in_pixel();
        let style = TextStyle::from((FAMILY, 15).into_font())
            .color(&GREY)
            .pos(Pos::new(HPos::Center, VPos::Top));
        for (i, l) in wrap(&plot_area, &panel.note, &style, w.saturating_sub(40))
            .iter()
            .enumerate()
        {
            plot_area
                .draw_text(l, &style, (w as i32 / 2, 12 + 19 * i as i32))
                .map_err(DrawError::new)?;
        }
    }
    if !panel.has_data() {
        let plot_area = chart.plotting_area().strip_coord_spec();
        let (w, h) = plot_area.dim_in_pixel();
        let style = TextStyle::from((FAMILY, 16).into_font())
            .color(&GREY)
            .pos(Pos::new(HPos::Center, VPos::Center));
        let lines = wrap(&plot_area, &panel.no_data, &style, w.saturating_sub(40));
        let n = lines.len() as i32;
        for (i, l) in lines.iter().enumerate() {
            let y = h as i32 / 2 + (2 * i as i32 - (n - 1)) * 11;
            plot_area
                .draw_text(l, &style, (w as i32 / 2, y))
                .map_err(DrawError::new)?;
        }
    }

    for layer in &panel.layers {
        match layer {
            Layer::Stack { xs, layers } => {
                let mut below = vec![0.0; xs.len()];
                for (_, color, ys) in layers {
                    let above: Vec<f64> = below
                        .iter()
                        .zip(ys.iter().chain(std::iter::repeat(&0.0)))
                        .map(|(b, y)| b + y.max(0.0))
                        .collect();
                    let mut poly: Vec<(f64, f64)> =
                        xs.iter().copied().zip(above.iter().copied()).collect();
                    poly.extend(xs.iter().copied().zip(below.iter().copied()).rev());
                    chart
                        .draw_series(std::iter::once(Polygon::new(poly, color.mix(0.8).filled())))
                        .map_err(DrawError::new)?;
                    chart
                        .draw_series(LineSeries::new(
                            xs.iter().copied().zip(above.iter().copied()),
                            color.stroke_width(1),
                        ))
                        .map_err(DrawError::new)?;
                    below = above;
                }
            }
            Layer::Bars { color, bins, .. } => {
                chart
                    .draw_series(bins.iter().filter(|b| b.2 > 0.0).map(|&(lo, hi, h)| {
                        Rectangle::new([(lo, 0.0), (hi, h)], color.mix(0.85).filled())
                    }))
                    .map_err(DrawError::new)?;
            }
            Layer::Band { color, points, .. } => {
                let fill = color.mix(BAND_ALPHA).filled();
                for seg in points
                    .split(|p| !(p.0.is_finite() && p.1.is_finite() && p.2.is_finite()))
                    .filter(|s| !s.is_empty())
                {
                    if let [(x, lo, hi)] = seg {
                        chart
                            .draw_series(std::iter::once(PathElement::new(
                                vec![(*x, *lo), (*x, *hi)],
                                color.mix(0.5).stroke_width(3),
                            )))
                            .map_err(DrawError::new)?;
                        continue;
                    }
                    let mut poly: Vec<(f64, f64)> = seg.iter().map(|p| (p.0, p.2)).collect();
                    poly.extend(seg.iter().rev().map(|p| (p.0, p.1)));
                    chart
                        .draw_series(std::iter::once(Polygon::new(poly, fill)))
                        .map_err(DrawError::new)?;
                }
            }
            Layer::Tiles { scale, tiles } => {
                for t in tiles {
                    let fill = scale.color(t.value);
                    let corners = [(t.x - 0.5, t.y - 0.5), (t.x + 0.5, t.y + 0.5)];
                    chart
                        .draw_series([
                            Rectangle::new(corners, fill.filled()),
                            Rectangle::new(corners, WHITE.stroke_width(2)),
                        ])
                        .map_err(DrawError::new)?;
                    // Dark cells get white text and frames.
                    let ink = if luminance(fill) < 0.5 { WHITE } else { INK };
                    if t.outlined {
                        // A closed path: plotters draws rectangles' strokes 1 px wide.
                        let (a, b) = (0.44, 0.44);
                        let frame = vec![
                            (t.x - a, t.y - b),
                            (t.x + a, t.y - b),
                            (t.x + a, t.y + b),
                            (t.x - a, t.y + b),
                            (t.x - a, t.y - b),
                        ];
                        chart
                            .draw_series([PathElement::new(frame, ink.stroke_width(OUTLINE_PX))])
                            .map_err(DrawError::new)?;
                    }
                    let (a, b) = (
                        chart.backend_coord(&corners[0]),
                        chart.backend_coord(&corners[1]),
                    );
                    let (w, h) = ((b.0 - a.0).abs(), (b.1 - a.1).abs());
                    // As large as fits: about 0.6 em per character, a third of the
                    // cell's height, 11 to 18 px; too small a cell gets no text.
                    let chars = t.text.chars().count().max(1) as f64;
                    let size = (w as f64 * 0.85 / (0.6 * chars))
                        .min(h as f64 / 3.0)
                        .min(18.0)
                        .floor();
                    if t.text.is_empty() || size < 11.0 {
                        continue;
                    }
                    let style = TextStyle::from((FAMILY, size).into_font())
                        .color(&ink)
                        .pos(Pos::new(HPos::Center, VPos::Center));
                    chart
                        .draw_series(std::iter::once(Text::new(
                            t.text.clone(),
                            (t.x, t.y),
                            style,
                        )))
                        .map_err(DrawError::new)?;
                }
            }
            Layer::Line { .. } | Layer::VLine { .. } | Layer::Dots { .. } | Layer::Key { .. } => {}
        }
    }
    // Lines and markers over areas and bars.
    for layer in &panel.layers {
        match layer {
            Layer::Line {
                color,
                points,
                dashed,
                markers,
                ..
            } => {
                for seg in points.split(|p| !p.1.is_finite()).filter(|s| !s.is_empty()) {
                    let style = color.stroke_width(2);
                    if *dashed {
                        chart
                            .draw_series(DashedLineSeries::new(seg.iter().copied(), 8, 5, style))
                            .map_err(DrawError::new)?;
                    } else {
                        chart
                            .draw_series(LineSeries::new(seg.iter().copied(), style))
                            .map_err(DrawError::new)?;
                    }
                    if *markers || seg.len() == 1 {
                        chart
                            .draw_series(seg.iter().map(|&p| Circle::new(p, 3, color.filled())))
                            .map_err(DrawError::new)?;
                    }
                }
            }
            Layer::Dots { scale, points } => {
                for &(x, y, v) in points {
                    chart
                        .draw_series([
                            Circle::new((x, y), 8, scale.color(v).filled()),
                            Circle::new((x, y), 8, INK.stroke_width(1)),
                        ])
                        .map_err(DrawError::new)?;
                }
            }
            Layer::VLine {
                color, x, dashed, ..
            } if (x0..=x1).contains(x) => {
                let pts = [(*x, y0), (*x, y1)];
                let style = color.stroke_width(2);
                if *dashed {
                    chart
                        .draw_series(DashedLineSeries::new(pts, 8, 5, style))
                        .map_err(DrawError::new)?;
                } else {
                    chart
                        .draw_series(LineSeries::new(pts, style))
                        .map_err(DrawError::new)?;
                }
            }
            _ => {}
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Figure {
        let mut p = Panel::new("panel", "x (days)", "per day");
        p.layers.push(Layer::Line {
            label: "a & b".into(),
            color: color(0),
            points: vec![(0.0, 1.0), (1.0, f64::NAN), (2.0, 3.0), (3.0, 2.0)],
            dashed: false,
            markers: true,
        });
        p.layers.push(Layer::VLine {
            label: "marker".into(),
            color: color(1),
            x: 1.5,
            dashed: true,
        });
        let empty = Panel::new("empty", "x", "y");
        Figure::new("t", "Title <with> markup", "caption", vec![p, empty])
    }

    /// A stacked figure gives a blank panel (no data, or zero throughout) a strip
    /// that says why, not a full row of empty axes.
    #[test]
    fn blank_panels_shrink_to_a_strip() {
        super::super::font::load().unwrap();
        let mut f = sample();
        let mut zero = Panel::new("all zero", "x", "y");
        zero.note = "zero throughout this run".into();
        zero.layers.push(Layer::Line {
            label: "z".into(),
            color: color(2),
            points: vec![(0.0, 0.0), (1.0, 0.0)],
            dashed: false,
            markers: false,
        });
        f.panels.push(zero);
        assert_eq!(
            f.panels.iter().map(Panel::is_blank).collect::<Vec<_>>(),
            [false, true, true]
        );
        assert_eq!(f.size(), (1000, TITLE_H + 20 + 300 + 2 * STRIP_H));
        let svg = f.to_svg().unwrap();
        for text in ["empty", "no data", "all zero", "zero throughout this run"] {
            assert!(svg.contains(text), "{text}");
        }
        // A single panel keeps its full size, blank or not; so does a grid.
        f.panels.truncate(1);
        assert_eq!(f.size(), (1000, 600));
    }

    #[test]
    fn svg_is_well_formed_escaped_and_deterministic() {
        super::super::font::load().unwrap();
        let f = sample();
        let a = f.to_svg().unwrap();
        assert!(a.starts_with("<svg"), "{}", &a[..60]);
        assert!(a.trim_end().ends_with("</svg>"));
        assert!(a.contains("Title &lt;with&gt; markup"));
        assert!(a.contains("a &amp; b"));
        assert!(a.contains("no data"));
        assert_eq!(a, f.to_svg().unwrap());
        // The second panel is empty: a strip.
        assert_eq!(f.size(), (1000, TITLE_H + 20 + 300 + STRIP_H));
    }

    #[test]
    fn legend_lists_each_labelled_series_once() {
        let mut f = sample();
        f.panels[1] = f.panels[0].clone();
        let l = f.legend();
        assert_eq!(
            l.iter().map(|e| e.0.as_str()).collect::<Vec<_>>(),
            ["a & b", "marker"]
        );
    }

    #[test]
    fn a_band_spans_its_low_and_high_values_and_skips_gaps() {
        let band = Layer::Band {
            label: "95% confidence interval".into(),
            color: color(0),
            points: vec![
                (1.0, 4.0, 6.0),
                (1.5, 5.0, 7.0),
                (2.0, f64::NAN, f64::NAN),
                (3.0, 2.0, 9.0),
                (f64::NAN, -100.0, 100.0),
            ],
        };
        assert_eq!(band.extent(), Some(((1.0, 3.0), (2.0, 9.0))));
        assert!(band.has_data());
        let mut p = Panel::new("", "", "");
        p.layers.push(band.clone());
        let ((x0, x1), (y0, y1)) = p.ranges();
        assert_eq!((x0, x1, y0), (1.0, 3.0, 0.0));
        assert!((y1 - 9.72).abs() < 1e-9, "{y1}");
        let empty = Layer::Band {
            label: "b".into(),
            color: color(0),
            points: vec![(1.0, f64::NAN, 2.0)],
        };
        assert!(!empty.has_data());
        assert_eq!(empty.extent().map(|e| e.1), None);
        // Bands of several lines share one grey legend entry, after the lines.
        let mut second = band.clone();
        if let Layer::Band { color: c, .. } = &mut second {
            *c = color(1);
        }
        let mut f = sample();
        f.panels[0].layers.extend([band, second, empty]);
        let legend = f.legend();
        assert_eq!(
            legend.iter().map(|e| e.0.as_str()).collect::<Vec<_>>(),
            ["a & b", "marker", "95% confidence interval"]
        );
        assert_eq!(legend[2].1, GREY);
        super::super::font::load().unwrap();
        let svg = f.to_svg().unwrap();
        assert!(svg.contains("<polygon"), "the band is a polygon");
    }

    #[test]
    fn tiles_and_dots_span_their_cells_and_show_their_scale() {
        let scale = ColorScale {
            label: "m, mean".into(),
            lo: 1.0,
            hi: 3.0,
        };
        let tile = |x: f64, y: f64, value: f64| Tile {
            x,
            y,
            value,
            text: format::number(value),
            outlined: x == 0.0,
        };
        let tiles = Layer::Tiles {
            scale: scale.clone(),
            tiles: vec![
                tile(0.0, 0.0, 1.0),
                tile(2.0, 1.0, 3.0),
                tile(1.0, 0.0, f64::NAN),
            ],
        };
        assert_eq!(tiles.extent(), Some(((-0.5, 2.5), (-0.5, 1.5))));
        // The ends of viridis: dark purple (68, 1, 84) and yellow (254, 232, 37).
        assert_eq!(scale.color(1.0), RGBColor(68, 1, 84));
        assert_eq!(scale.color(3.0), RGBColor(254, 232, 37));
        assert_eq!(scale.color(2.0), viridis(0.5));
        assert_eq!(scale.color(f64::NAN), NO_VALUE);
        assert_eq!(viridis(-1.0), RGBColor(68, 1, 84), "clamped");
        let flat = ColorScale {
            lo: 2.0,
            hi: 2.0,
            ..scale.clone()
        };
        assert_eq!(flat.color(2.0), viridis(0.5));
        let dots = Layer::Dots {
            scale: scale.clone(),
            points: vec![(5.0, 7.0, 1.0), (6.0, 8.0, f64::NAN)],
        };
        assert_eq!(dots.extent(), Some(((5.0, 6.0), (7.0, 8.0))));
        let mut p = Panel::new("", "x", "y");
        p.layers.push(tiles);
        p.x_ticks = vec![(0.0, "1d".into()), (1.0, "3d".into()), (2.0, "7d".into())];
        p.y_ticks = vec![(0.0, "true".into()), (1.0, "false".into())];
        let f = Figure::new("h", "heat", "", vec![p]);
        assert_eq!(
            f.legend(),
            [(
                "m, mean".to_string(),
                INK,
                Sample::Scale { lo: 1.0, hi: 3.0 }
            )]
        );
        super::super::font::load().unwrap();
        let svg = f.to_svg().unwrap();
        for text in [
            "1d",
            "3d",
            "7d",
            "true",
            "false",
            "m, mean",
            "yellow = high",
            "2.5",
        ] {
            assert!(svg.contains(&format!("\n{text}\n")), "no `{text}`");
        }
        // The one outlined tile (x = 0, dark: a white frame) has its frame.
        let frame = format!("stroke=\"#FFFFFF\" stroke-width=\"{OUTLINE_PX}\"");
        assert_eq!(svg.matches(&frame).count(), 1, "{svg}");
    }

    #[test]
    fn categorical_axes_label_their_ticks_and_thin_them() {
        use plotters::coord::ranged1d::BoldPoints;
        let ticks: Vec<(f64, String)> = (0..30).map(|i| (i as f64, format!("c{i}"))).collect();
        let axis = Axis::new(-0.5, 29.5, &ticks);
        assert_eq!(axis.key_points(BoldPoints(10)).len(), 10);
        assert_eq!(axis.key_points(BoldPoints(10))[1], 3.0);
        assert_eq!(axis.key_points(BoldPoints(40)).len(), 30);
        assert!(axis.key_points(10usize).is_empty(), "no light lines");
        assert_eq!(tick_label(3.0, 29.5, &ticks), "c3");
        assert_eq!(tick_label(3.5, 29.5, &ticks), "");
        // A numeric axis keeps plotters' round ticks.
        let numeric = Axis::new(0.0, 10.0, &[]);
        let inner: RangedCoordf64 = (0.0..10.0).into();
        assert_eq!(numeric.key_points(6usize), inner.key_points(6usize));
        assert_eq!(
            numeric.key_points(BoldPoints(6)),
            inner.key_points(BoldPoints(6))
        );
        assert_eq!(tick_label(12_000.0, 12_000.0, &[]), "12k");
    }

    #[test]
    fn colour_bar_ticks_are_round() {
        assert_eq!(
            nice_ticks(1308.0, 4478.4, 5),
            (vec![2000.0, 3000.0, 4000.0], 1000.0)
        );
        assert_eq!(nice_ticks(1.09, 17.76, 5).0, [5.0, 10.0, 15.0]);
        assert_eq!(nice_ticks(0.3, 0.405, 5).0, [0.3, 0.35, 0.4]);
        assert_eq!(nice_ticks(0.0, 1.0, 5).0, [0.0, 0.2, 0.4, 0.6, 0.8, 1.0]);
        assert_eq!(nice_ticks(2.0, 2.0, 5), (vec![2.0], 0.0));
        assert_eq!(nice_ticks(f64::INFINITY, 1.0, 5).1, 0.0);
    }

    #[test]
    fn ranges_start_at_zero_with_headroom() {
        let mut p = Panel::new("", "", "");
        p.layers.push(Layer::Bars {
            label: String::new(),
            color: color(0),
            bins: vec![(0.0, 1.0, 10.0), (1.0, 2.0, 5.0)],
        });
        let ((x0, x1), (y0, y1)) = p.ranges();
        assert_eq!((x0, x1, y0), (0.0, 2.0, 0.0));
        assert!((y1 - 10.8).abs() < 1e-9);
        // No data: a unit range, not a panic.
        assert_eq!(Panel::new("", "", "").ranges(), ((0.0, 1.0), (0.0, 1.08)));
    }
}
