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
pub(crate) const FAMILY: &str = "sans-serif";

/// The embedded font cannot be parsed: a broken build rather than a user error.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("the embedded DejaVu Sans font cannot be parsed")]
pub struct FontError;

/// Registers DejaVu Sans (regular and bold) as [`FAMILY`], once per process.
pub fn load() -> Result<(), FontError> {
    static DONE: OnceLock<Result<(), FontError>> = OnceLock::new();
    *DONE.get_or_init(|| {
        for (style, bytes) in [
            (FontStyle::Normal, dejavu::sans::regular()),
            (FontStyle::Bold, dejavu::sans::bold()),
        ] {
            plotters::style::register_font(FAMILY, style, bytes).map_err(|_| FontError)?;
        }
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registering_twice_is_harmless() {
        assert_eq!(load(), Ok(()));
        assert_eq!(load(), Ok(()));
    }
}
