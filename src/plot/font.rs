//! The one font the charts are drawn with, embedded in the binary.
//!
//! plotters' default text stack (font-kit) needs fontconfig and freetype from the
//! system, so it is off (`Cargo.toml`); with its `ab_glyph` feature instead, text is
//! rasterized from font bytes the program registers itself, and only registered
//! family names resolve. DejaVu Sans (the `dejavu` crate) is registered as
//! `sans-serif`, the family every chart asks for, so a chart renders the same on any
//! machine and the build needs no system font library. SVG files name the family
//! and let the viewer's own sans-serif draw the glyphs.

use plotters::style::FontStyle;
use std::sync::OnceLock;

/// The family name every chart uses.
pub const FAMILY: &str = "sans-serif";

/// Registers DejaVu Sans (regular and bold) as [`FAMILY`], once per process.
/// Returns an error message if the embedded font cannot be parsed, which would be
/// a broken build rather than a user error.
pub fn register() -> Result<(), String> {
    static DONE: OnceLock<Result<(), String>> = OnceLock::new();
    DONE.get_or_init(|| {
        for (style, bytes) in [
            (FontStyle::Normal, dejavu::sans::regular()),
            (FontStyle::Bold, dejavu::sans::bold()),
        ] {
            plotters::style::register_font(FAMILY, style, bytes)
                .map_err(|_| "the embedded DejaVu Sans font cannot be parsed".to_string())?;
        }
        Ok(())
    })
    .clone()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registering_twice_is_harmless() {
        assert_eq!(register(), Ok(()));
        assert_eq!(register(), Ok(()));
    }
}
