//! A chart as data ([`Figure`]: panels of lines, stacked areas, bars and markers)
//! and its rendering, once for SVG and once for PNG through the same generic code.
//!
//! The chart builders (`timeline`, `distribution`, `credit`) only decide what to
//! show; this file alone decides how it looks, so every chart shares one layout: a
//! bold title on top, panels in a grid, and one legend for the whole figure in a
//! strip on the right, outside the plotting areas, where it can never hide data.
//! A panel without data says so in its middle instead of drawing an empty frame.

use super::font::FAMILY;
use super::format;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// Width of the legend strip, px.
const LEGEND_W: u32 = 250;
/// Height of the title band, px.
const TITLE_H: u32 = 48;

/// Colours of projects (and of series when a chart has one project), in order: the
/// "Tableau 10" palette, distinct for most colour-blind readers and in greyscale.
pub const PALETTE: [RGBColor; 10] = [
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
pub fn color(i: usize) -> RGBColor {
    PALETTE[i % PALETTE.len()]
}

/// The palette's colours by name, for charts whose series have a fixed meaning
/// (server states, deadline and percentile marks).
pub const BLUE: RGBColor = PALETTE[0];
pub const ORANGE: RGBColor = PALETTE[1];
pub const GREEN: RGBColor = PALETTE[2];
pub const RED: RGBColor = PALETTE[3];
pub const PURPLE: RGBColor = PALETTE[4];
pub const BROWN: RGBColor = PALETTE[5];

pub const INK: RGBColor = RGBColor(30, 30, 30);
pub const GREY: RGBColor = RGBColor(120, 120, 120);

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
        }
        let range = |v: &[f64]| {
            let lo = v.iter().copied().fold(f64::INFINITY, f64::min);
            let hi = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            (lo <= hi).then_some((lo, hi))
        };
        Some((range(&xs)?, range(&ys).unwrap_or((0.0, 0.0))))
    }

    /// Whether the layer has something to draw.
    fn has_data(&self) -> bool {
        match self {
            Layer::Line { points, .. } => points.iter().any(|p| p.1.is_finite()),
            Layer::Stack { xs, layers } => !xs.is_empty() && !layers.is_empty(),
            Layer::Bars { bins, .. } => !bins.is_empty(),
            Layer::VLine { .. } => false,
        }
    }
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

    pub fn has_data(&self) -> bool {
        self.layers.iter().any(Layer::has_data)
    }

    fn ranges(&self) -> ((f64, f64), (f64, f64)) {
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
    Line { dashed: bool },
    Fill,
    VLine { dashed: bool },
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

    /// Size in pixels: 1000 × 600 for one panel; more panels add rows of 300 px.
    pub fn size(&self) -> (u32, u32) {
        let cols = self.columns.max(1);
        let rows = self.panels.len().div_ceil(cols).max(1) as u32;
        let w = if cols > 1 { 1400 } else { 1000 };
        let h = if rows == 1 {
            600
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
                    Layer::VLine {
                        label,
                        color,
                        dashed,
                        ..
                    } => add(label, *color, Sample::VLine { dashed: *dashed }),
                }
            }
        }
        out
    }

    /// The chart as an SVG document.
    pub fn to_svg(&self) -> Result<String, String> {
        let mut svg = String::new();
        {
            let root = SVGBackend::with_string(&mut svg, self.size()).into_drawing_area();
            self.draw(&root)?;
            root.present().map_err(|e| format!("{e:?}"))?;
        }
        Ok(svg)
    }

    /// Writes the chart as a PNG file.
    pub fn write_png(&self, path: &std::path::Path) -> Result<(), String> {
        let root = BitMapBackend::new(path, self.size()).into_drawing_area();
        self.draw(&root)?;
        root.present().map_err(|e| format!("{e:?}"))
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), String> {
        let err = |e: DrawingAreaErrorKind<DB::ErrorType>| format!("{e:?}");
        root.fill(&WHITE).map_err(err)?;
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
            .map_err(err)?;
        let (grid, legend_area) = body.split_horizontally(w - LEGEND_W);
        let cols = self.columns.max(1);
        let rows = self.panels.len().div_ceil(cols).max(1);
        let cells = grid.split_evenly((rows, cols));
        let several = self.panels.len() > 1;
        for (panel, area) in self.panels.iter().zip(&cells) {
            draw_panel(area, panel, several)?;
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
) -> Result<(), String> {
    let err = |e: DrawingAreaErrorKind<DB::ErrorType>| format!("{e:?}");
    let style = TextStyle::from((FAMILY, 14).into_font())
        .color(&INK)
        .pos(Pos::new(HPos::Left, VPos::Center));
    let (_, h) = area.dim_in_pixel();
    let line_h = 18;
    let mut y = 40i32;
    for (label, color, sample) in entries {
        let lines = wrap(area, label, &style, LEGEND_W - 60);
        if y + line_h * lines.len() as i32 > h as i32 - 10 {
            area.draw_text("…", &style, (48, y)).map_err(err)?;
            break;
        }
        let (x0, x1) = (10, 40);
        match sample {
            Sample::Line { dashed } => {
                let style = color.stroke_width(3);
                if *dashed {
                    for (a, b) in [(x0, x0 + 8), (x0 + 12, x0 + 20), (x0 + 24, x1)] {
                        area.draw(&PathElement::new(vec![(a, y), (b, y)], style))
                            .map_err(err)?;
                    }
                } else {
                    area.draw(&PathElement::new(vec![(x0, y), (x1, y)], style))
                        .map_err(err)?;
                }
            }
            Sample::Fill => {
                area.draw(&Rectangle::new([(x0, y - 7), (x1, y + 7)], color.filled()))
                    .map_err(err)?;
            }
            Sample::VLine { dashed } => {
                let style = color.stroke_width(3);
                let x = (x0 + x1) / 2;
                if *dashed {
                    for (a, b) in [(y - 8, y - 3), (y + 1, y + 8)] {
                        area.draw(&PathElement::new(vec![(x, a), (x, b)], style))
                            .map_err(err)?;
                    }
                } else {
                    area.draw(&PathElement::new(vec![(x, y - 8), (x, y + 8)], style))
                        .map_err(err)?;
                }
            }
        }
        for (i, l) in lines.iter().enumerate() {
            area.draw_text(l, &style, (48, y + i as i32 * line_h))
                .map_err(err)?;
        }
        y += line_h * lines.len() as i32 + 8;
    }
    Ok(())
}

fn draw_panel<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    panel: &Panel,
    with_title: bool,
) -> Result<(), String> {
    let err = |e: DrawingAreaErrorKind<DB::ErrorType>| format!("{e:?}");
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
    let mut chart = builder.build_cartesian_2d(x0..x1, y0..y1).map_err(err)?;
    let x_max = x0.abs().max(x1.abs());
    let y_max = y0.abs().max(y1.abs());
    let x_tick = |v: &f64| format::tick(*v, x_max);
    let y_tick = |v: &f64| format::tick(*v, y_max);
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
        .map_err(err)?;

    if !panel.note.is_empty() {
        let plot_area = chart.plotting_area().strip_coord_spec();
        let (w, _) = plot_area.dim_in_pixel();
        let style = TextStyle::from((FAMILY, 15).into_font())
            .color(&GREY)
            .pos(Pos::new(HPos::Center, VPos::Top));
        plot_area
            .draw_text(&panel.note, &style, (w as i32 / 2, 12))
            .map_err(err)?;
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
                .map_err(err)?;
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
                        .map_err(err)?;
                    chart
                        .draw_series(LineSeries::new(
                            xs.iter().copied().zip(above.iter().copied()),
                            color.stroke_width(1),
                        ))
                        .map_err(err)?;
                    below = above;
                }
            }
            Layer::Bars { color, bins, .. } => {
                chart
                    .draw_series(bins.iter().filter(|b| b.2 > 0.0).map(|&(lo, hi, h)| {
                        Rectangle::new([(lo, 0.0), (hi, h)], color.mix(0.85).filled())
                    }))
                    .map_err(err)?;
            }
            Layer::Line { .. } | Layer::VLine { .. } => {}
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
                            .map_err(err)?;
                    } else {
                        chart
                            .draw_series(LineSeries::new(seg.iter().copied(), style))
                            .map_err(err)?;
                    }
                    if *markers || seg.len() == 1 {
                        chart
                            .draw_series(seg.iter().map(|&p| Circle::new(p, 3, color.filled())))
                            .map_err(err)?;
                    }
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
                        .map_err(err)?;
                } else {
                    chart
                        .draw_series(LineSeries::new(pts, style))
                        .map_err(err)?;
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

    #[test]
    fn svg_is_well_formed_escaped_and_deterministic() {
        super::super::font::register().unwrap();
        let f = sample();
        let a = f.to_svg().unwrap();
        assert!(a.starts_with("<svg"), "{}", &a[..60]);
        assert!(a.trim_end().ends_with("</svg>"));
        assert!(a.contains("Title &lt;with&gt; markup"));
        assert!(a.contains("a &amp; b"));
        assert!(a.contains("no data"));
        assert_eq!(a, f.to_svg().unwrap());
        assert_eq!(f.size(), (1000, TITLE_H + 20 + 600));
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
