//! File-tree helpers shared by the tests that check what a failed write leaves behind.

use std::path::Path;

/// Every file and folder under `dir`, relative, sorted.
pub fn tree(dir: &Path) -> Vec<String> {
    let mut all = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            all.push(path.strip_prefix(dir).unwrap().display().to_string());
            if path.is_dir() && !path.is_symlink() {
                stack.push(path);
            }
        }
    }
    all.sort();
    all
}
