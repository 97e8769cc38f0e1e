//! Every `§` citation in the repository resolves to a heading inside the clone.
//!
//! The convention (ARCHITECTURE.md, "Citations"): a section sign with a number, as in
//! `§5.4`, cites a numbered heading (`## 5.` / `### 5.4`) of
//! `docs/reference/mac80211-tx-path.md`, unless the text just before it names another
//! document: a Markdown file of `docs/` (`rate-control.md §5`), or an external standard
//! (`RFC 6298 §2.1`, `802.11-2016 §10.3`), which is not checked. Inside a file of `docs/reference/`, a bare
//! `§` cites that file itself.
//!
//! The test walks the source tree (crates, scenarios, scripts, docs, bench, the top-level
//! Markdown files), collects every citation and fails with the list of those whose
//! section does not exist, so a renumbered reference or a typo is caught at once.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Section numbers of the numbered headings of a Markdown file: `## 5. Airtime` gives
/// "5", `### 5.4 Generation 3` gives "5.4".
fn sections(markdown: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for line in markdown.lines() {
        let Some(rest) = line.strip_prefix('#') else {
            continue;
        };
        let title = rest.trim_start_matches('#').trim_start();
        let number: String = title
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '.')
            .collect();
        let number = number.trim_end_matches('.');
        if number.chars().next().is_some_and(|c| c.is_ascii_digit()) {
            out.insert(number.to_string());
        }
    }
    out
}

/// What a citation points at.
#[derive(Debug, PartialEq)]
enum Target {
    /// A document inside the clone, by its file name under `docs/` or `docs/reference/`.
    Doc(String),
    /// An external standard (an RFC, IEEE 802.11): not checked.
    External,
}

/// The target of the citation whose `§` starts at byte `at` of `line`, in a file whose
/// bare citations mean `default_doc`.
fn target(line: &str, at: usize, default_doc: &str) -> Target {
    let before = &line[..at];
    // The nearest naming before the `§`, within the same clause.
    let window_start = before
        .char_indices()
        .rev()
        .nth(48)
        .map(|(i, _)| i)
        .unwrap_or(0);
    let window = &before[window_start..];
    let mut best: Option<(usize, Target)> = None;
    let mut consider = |pos: Option<usize>, t: Target| {
        if let Some(p) = pos {
            if best.as_ref().is_none_or(|(q, _)| p > *q) {
                best = Some((p, t));
            }
        }
    };
    consider(window.rfind("RFC"), Target::External);
    consider(window.rfind("802.11"), Target::External);
    consider(window.rfind("IEEE"), Target::External);
    consider(
        window.rfind("reference"),
        Target::Doc("mac80211-tx-path.md".into()),
    );
    if let Some(md) = window.rfind(".md") {
        let name_start = window[..md]
            .rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '-' || c == '_'))
            .map(|i| i + 1)
            .unwrap_or(0);
        let name = &window[name_start..md + 3];
        consider(Some(md), Target::Doc(name.to_string()));
    }
    match best {
        Some((_, t)) => t,
        None => Target::Doc(default_doc.to_string()),
    }
}

/// The cited section: the digits and dots after `§` (and an optional space).
fn cited_section(after: &str) -> Option<String> {
    let after = after.strip_prefix(' ').unwrap_or(after);
    let s: String = after
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '.')
        .collect();
    let s = s.trim_end_matches('.').to_string();
    (!s.is_empty()).then_some(s)
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        let name = e.file_name().to_string_lossy().into_owned();
        if p.is_dir() {
            if name == "target" || name == "build" || name.starts_with('.') {
                continue;
            }
            walk(&p, out);
        } else if ["rs", "md", "toml", "sh", "py", "cc", "ipynb"]
            .iter()
            .any(|ext| name.ends_with(&format!(".{ext}")))
        {
            out.push(p);
        }
    }
}

#[test]
fn every_citation_resolves_inside_the_clone() {
    let root = repo_root();
    let mut docs: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for dir in ["docs", "docs/reference"] {
        for e in fs::read_dir(root.join(dir))
            .expect("docs/ exists")
            .flatten()
        {
            let name = e.file_name().to_string_lossy().into_owned();
            if name.ends_with(".md") {
                let text = fs::read_to_string(e.path()).unwrap();
                docs.insert(name, sections(&text));
            }
        }
    }
    assert!(
        docs.get("mac80211-tx-path.md")
            .is_some_and(|s| s.len() > 50),
        "docs/reference/mac80211-tx-path.md is missing or has lost its numbered headings"
    );

    let mut files = Vec::new();
    for dir in ["crates", "scenarios", "scripts", "docs", "bench"] {
        walk(&root.join(dir), &mut files);
    }
    for top in [
        "README.md",
        "ARCHITECTURE.md",
        "CONTRIBUTING.md",
        "CHANGELOG.md",
    ] {
        if root.join(top).exists() {
            files.push(root.join(top));
        }
    }

    let mut checked = 0;
    let mut broken = Vec::new();
    for file in &files {
        let text = fs::read_to_string(file).unwrap_or_default();
        let rel = file
            .strip_prefix(&root)
            .unwrap_or(file)
            .display()
            .to_string();
        let default_doc = if rel.starts_with("docs/reference/") {
            file.file_name().unwrap().to_string_lossy().into_owned()
        } else {
            "mac80211-tx-path.md".to_string()
        };
        for (n, line) in text.lines().enumerate() {
            for (at, _) in line.match_indices('§') {
                let Some(section) = cited_section(&line[at + '§'.len_utf8()..]) else {
                    continue;
                };
                let Target::Doc(doc) = target(line, at, &default_doc) else {
                    continue;
                };
                checked += 1;
                let ok = docs.get(&doc).is_some_and(|s| s.contains(&section));
                if !ok {
                    broken.push(format!("{rel}:{}: §{section} in {doc}", n + 1));
                }
            }
        }
    }
    assert!(
        checked > 200,
        "only {checked} citations found: is the walk still looking at the sources?"
    );
    assert!(
        broken.is_empty(),
        "{} of {checked} citations do not resolve:\n{}",
        broken.len(),
        broken.join("\n")
    );
}

#[test]
fn the_citation_rules_pick_the_right_document() {
    let d = "mac80211-tx-path.md";
    let t = |line: &str| target(line, line.find('§').unwrap(), d);
    assert_eq!(t("DRR (§5.4)"), Target::Doc(d.into()));
    assert_eq!(t("as the reference notes (§5.4)"), Target::Doc(d.into()));
    assert_eq!(t("(RFC 6298 §2.1)"), Target::External);
    assert_eq!(t("802.11-2016 / reference §11.2"), Target::Doc(d.into()));
    assert_eq!(t("IEEE 802.11-2016 §10.3"), Target::External);
    assert_eq!(
        t("(reference rate-control.md §5)"),
        Target::Doc("rate-control.md".into())
    );
    assert_eq!(
        sections("## 5. Airtime\n### 5.4 Generation 3 [V]\n#### Notes\n## 12. OpenWrt"),
        ["12", "5", "5.4"].iter().map(|s| s.to_string()).collect()
    );
    assert_eq!(cited_section("5.4)"), Some("5.4".into()));
    assert_eq!(cited_section(" 12."), Some("12".into()));
}
