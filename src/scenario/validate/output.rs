//! The `[output]` section (docs/scenario.md, "`[output]`"): the sampling interval
//! and histogram bin of the time series, and the warm-up, which must leave part of
//! the run to measure. Checked last, after the sections the run is made of.

use super::Checker;

impl Checker<'_> {
    /// `[output]`: positive sampling periods and a warm-up within the run.
    pub(super) fn output(&mut self) {
        self.duration_positive("output.interval", self.file.output.interval);
        self.duration_positive("output.histogram_bin", self.file.output.histogram_bin);
        self.warmup();
    }

    /// `[output] warmup` must leave part of the run to measure.
    fn warmup(&mut self) {
        let (w, d) = (
            self.file.output.warmup.get(),
            self.file.simulation.duration.get(),
        );
        if w < 0 || (w > 0 && w >= d) {
            self.push(
                "output.warmup",
                format!(
                    "warmup = {w} s is not within the run; expected a duration from 0 to less than simulation.duration ({d} s)"
                ),
            );
        }
    }
}
