//! The progress bar of the long checkpoint commands.

use std::io::IsTerminal;

/// A progress bar on stderr, only when stderr is a terminal (never in pipes, files or tests):
/// `show(done, total)` moves it, and it is cleared when dropped.
pub(crate) struct Progress {
    bar: Option<indicatif::ProgressBar>,
}

impl Progress {
    /// A bar counting `what` (e.g. "tensors").
    pub(crate) fn new(what: &str) -> Progress {
        if !std::io::stderr().is_terminal() {
            return Progress { bar: None };
        }
        let bar = indicatif::ProgressBar::new(0);
        if let Ok(style) =
            indicatif::ProgressStyle::with_template(&format!("{{bar:40}} {{pos}}/{{len}} {what}, {{elapsed}}"))
        {
            bar.set_style(style);
        }
        Progress { bar: Some(bar) }
    }

    pub(crate) fn show(&self, done: usize, total: usize) {
        if let Some(bar) = &self.bar {
            bar.set_length(total as u64);
            bar.set_position(done as u64);
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}
