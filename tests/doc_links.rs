//! Every repository path that the docs, comments and scripts cite exists: a reader sent to
//! `docs/research/onnx_cast.md` or `scripts/crosscheck_cast.py` finds it. Scanned: README.md,
//! CHANGELOG.md, tables/README.md, docs/, src/, scripts/, python/ and tests/ (text files). A cited
//! path starts at a top-level entry of the repository (`src/`, `docs/`, `README.md`, ...);
//! `{a,b}` lists and `*` or `<placeholder>` parts are expanded, and a path in another project's
//! repository is written with that project's name (`onnx:docs/Operators.md`), which the scan
//! skips, as it skips paths inside a longer path or URL (`github.com/onnx/onnx/docs/...`).

use std::path::{Path, PathBuf};

/// The top-level entries a cited repository path starts with.
const TOP: &[&str] = &[
    "README.md",
    "CHANGELOG.md",
    "Cargo.toml",
    "src/",
    "tests/",
    "docs/",
    "tables/",
    "scripts/",
    "python/",
    "benches/",
    "examples/",
    "fuzz/",
    ".ci/",
];

/// Folders that hold no cited text of the project's own (builds, caches, generated test data).
const SKIPPED: &[&str] = &["target", ".git", "__pycache__", ".venv", "onnx-node", "fixtures", "data"];

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A character that can be part of a path (a `<placeholder>` is read separately).
fn path_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || "_./{},*-".contains(c)
}

/// A character that, just before a top-level name, makes it part of something longer: a longer
/// path, a URL, another project's `name:path`, a word (`mysrc/`), a quote's possessive.
fn joined_to(c: char) -> bool {
    c.is_ascii_alphanumeric() || "_./-:'".contains(c)
}

/// The repository paths `line` cites, as written (placeholders become `*`).
fn cited_paths(line: &str) -> Vec<String> {
    let mut found = Vec::new();
    let chars: Vec<(usize, char)> = line.char_indices().collect();
    for (k, &(at, _)) in chars.iter().enumerate() {
        if k > 0 && joined_to(chars[k - 1].1) {
            continue;
        }
        if !TOP.iter().any(|top| line[at..].starts_with(top)) {
            continue;
        }
        let mut path = String::new();
        let mut rest = line[at..].chars().peekable();
        while let Some(&c) = rest.peek() {
            if c == '<' {
                // A placeholder such as `<test name>` up to its `>`.
                let tail: String = rest.clone().collect();
                let Some(close) = tail.find('>') else { break };
                path.push('*');
                for _ in 0..tail[..=close].chars().count() {
                    rest.next();
                }
            } else if path_char(c) {
                path.push(c);
                rest.next();
            } else {
                break;
            }
        }
        let trimmed = path.trim_end_matches(['.', ',', '/']);
        found.push(trimmed.to_string());
    }
    found
}

/// `path` with each `{a,b,...}` list expanded.
fn expand(path: &str) -> Vec<String> {
    let Some(open) = path.find('{') else { return vec![path.to_string()] };
    let Some(close) = path[open..].find('}').map(|c| open + c) else { return vec![path.to_string()] };
    path[open + 1..close]
        .split(',')
        .flat_map(|alt| expand(&format!("{}{alt}{}", &path[..open], &path[close + 1..])))
        .collect()
}

/// Whether `name` matches `pattern`, where `*` stands for any characters but `/`.
fn matches(pattern: &[u8], name: &[u8]) -> bool {
    match pattern.split_first() {
        None => name.is_empty(),
        Some((b'*', rest)) => {
            (0..=name.len()).take_while(|&k| k == 0 || name[k - 1] != b'/').any(|k| matches(rest, &name[k..]))
        }
        Some((&c, rest)) => name.first() == Some(&c) && matches(rest, &name[1..]),
    }
}

/// Every file and folder of the repository, relative, with `/` separators.
fn repository_entries(dir: &Path, prefix: &str, out: &mut Vec<String>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let entry = entry.unwrap();
        let name = entry.file_name().into_string().unwrap();
        let relative = format!("{prefix}{name}");
        out.push(relative.clone());
        if entry.file_type().unwrap().is_dir() && name != "target" && name != ".git" {
            repository_entries(&entry.path(), &format!("{relative}/"), out);
        }
    }
}

/// The text files scanned for citations.
fn scanned_files() -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_str().unwrap().to_string();
            if path.is_dir() {
                if !SKIPPED.contains(&name.as_str()) {
                    walk(&path, out);
                }
            } else if ["md", "rs", "py", "pyi", "sh", "toml", "txt"]
                .iter()
                .any(|ext| path.extension().is_some_and(|e| e == *ext))
            {
                out.push(path);
            }
        }
    }
    let root = root();
    let mut files: Vec<PathBuf> =
        ["README.md", "CHANGELOG.md", "tables/README.md"].iter().map(|f| root.join(f)).collect();
    for dir in ["docs", "src", "scripts", "python", "tests"] {
        walk(&root.join(dir), &mut files);
    }
    // This file's own examples of what the scan reads are no citations.
    files.retain(|f| !f.ends_with("tests/doc_links.rs"));
    files.sort();
    files
}

#[test]
fn the_scanner_reads_citations_as_meant() {
    assert_eq!(cited_paths("see docs/research/onnx_cast.md §7."), ["docs/research/onnx_cast.md"]);
    assert_eq!(cited_paths("onnx's docs/technical/int4.md: nearest"), ["docs/technical/int4.md"]);
    assert!(cited_paths("`onnx:docs/Operators.md` and https://github.com/onnx/onnx/blob/main/docs/x.md").is_empty());
    assert!(cited_paths("python/src/lib.rs").len() == 1 && cited_paths("mysrc/lib.rs").is_empty());
    assert_eq!(cited_paths("writes tests/data/mx/gfloat_<format>.json:"), ["tests/data/mx/gfloat_*.json"]);
    assert_eq!(cited_paths("    tests/onnx-node/<test name>/model.onnx"), ["tests/onnx-node/*/model.onnx"]);
    assert_eq!(expand("src/{a,b}/c{1,2}.rs"), ["src/a/c1.rs", "src/a/c2.rs", "src/b/c1.rs", "src/b/c2.rs"]);
    assert!(matches(b"tests/*/model.onnx", b"tests/abc/model.onnx"));
    assert!(!matches(b"tests/*.rs", b"tests/support/oracle.rs"));
}

#[test]
fn every_cited_repository_path_exists() {
    let root = root();
    let mut entries = Vec::new();
    repository_entries(&root, "", &mut entries);
    let (mut checked, mut missing) = (0, Vec::new());
    for file in scanned_files() {
        let text = std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        let shown = file.strip_prefix(&root).unwrap().display().to_string();
        for (number, line) in text.lines().enumerate() {
            for cited in cited_paths(line) {
                for path in expand(&cited) {
                    let exists = if path.contains('*') {
                        entries.iter().any(|e| matches(path.as_bytes(), e.as_bytes()))
                    } else {
                        root.join(&path).exists()
                    };
                    checked += 1;
                    if !exists {
                        missing.push(format!("{shown}:{}: {path}", number + 1));
                    }
                }
            }
        }
    }
    assert!(missing.is_empty(), "cited but not in the repository:\n{}", missing.join("\n"));
    // The scan reads the citations there are (279 when this was written), not none.
    assert!(checked > 200, "only {checked} citations found");
}

/// The live cross-check figures the docs show are the ones the scripts wrote: the text between
/// `<!-- crosschecks:begin -->` and `<!-- crosschecks:end -->` (in README.md or a chapter of
/// docs/guide/, exactly once) is docs/crosschecks.md below its title, which
/// `scripts/crosscheck_record.py` writes from docs/crosschecks.json; nobody types the figures.
#[test]
fn the_cross_check_figures_are_the_scripts() {
    let written = std::fs::read_to_string(root().join("docs/crosschecks.md")).unwrap();
    let body = written.split_once('\n').map_or("", |(_, rest)| rest).trim();
    assert!(body.contains("| 0 |"), "docs/crosschecks.md holds no compared row");
    let mut docs = vec![root().join("README.md")];
    if let Ok(dir) = std::fs::read_dir(root().join("docs/guide")) {
        docs.extend(dir.filter_map(|e| e.ok().map(|e| e.path())).filter(|p| p.extension().is_some_and(|x| x == "md")));
    }
    let mut quotes = Vec::new();
    for doc in &docs {
        let text = std::fs::read_to_string(doc).unwrap();
        for part in text.split("<!-- crosschecks:begin -->").skip(1) {
            let (quoted, _) =
                part.split_once("<!-- crosschecks:end -->").expect("an end marker after the begin marker");
            quotes.push((doc.clone(), quoted.trim().to_string()));
        }
    }
    assert_eq!(quotes.len(), 1, "the figures are quoted once: {:?}", quotes.iter().map(|q| &q.0).collect::<Vec<_>>());
    assert!(
        quotes[0].1 == body,
        "{} quotes other figures than docs/crosschecks.md: python3 scripts/crosscheck_record.py --quote FILE",
        quotes[0].0.display()
    );
}
