//! Results directories (`-o DIR`): written whole or not at all, and replaced by
//! `--force` only when txop itself wrote them.
//!
//! Every results directory holds a marker file, [`MARKER`], listing the files txop put
//! there. `--force` replaces a directory only if it is a real directory (not a link),
//! carries the marker, and holds exactly the files the marker lists: a directory a
//! user made, or one a user has since added a file to, is never removed. The current
//! directory and its parents, the root and the home directory are refused whatever
//! they hold. A new directory is built beside the target under a temporary name; the
//! old one is renamed aside, the new one renamed into place, and only then is the old
//! one deleted, so that a failure at any step leaves either the old directory or the
//! new one complete, never neither.

use std::collections::BTreeSet;
use std::path::{Component, Path, PathBuf};

/// The marker file's name.
pub const MARKER: &str = ".txop-results";

/// The marker's first line; the file names follow, one a line.
const MARKER_HEADER: &str =
    "txop results directory: `txop … -o DIR --force` replaces it only while it holds exactly these files";

/// What is at the output path before writing.
#[derive(Debug, PartialEq, Eq)]
pub enum Existing {
    /// Nothing: the directory will be created.
    Absent,
    /// A results directory txop wrote, untouched since: `--force` may replace it.
    Ours,
}

/// The places that are never a results directory, for [`check_output`]: the current
/// directory (a target equal to it or to any of its ancestors is refused) and the
/// user's home directory.
#[derive(Debug, Clone)]
pub struct Protected {
    pub cwd: Option<PathBuf>,
    pub home: Option<PathBuf>,
}

impl Protected {
    /// This process's current directory and `$HOME`, canonical.
    pub fn of_process() -> Protected {
        let canon = |p: PathBuf| std::fs::canonicalize(&p).ok();
        Protected {
            cwd: std::env::current_dir().ok().and_then(canon),
            home: std::env::var_os("HOME")
                .filter(|h| !h.is_empty())
                .map(PathBuf::from)
                .and_then(canon),
        }
    }
}

/// Whether `dir` may become a results directory: `Ok` says what is there now; `Err` is
/// the reason it may not (one line, without the path, which the caller prepends).
///
/// Refused whatever `force` says: an empty path; a path that resolves to `/`, to the
/// home directory, or to the current directory or one of its ancestors (`.`, `..`);
/// anything that is not a plain directory (a file, a device, a FIFO, a symbolic link);
/// a directory without txop's marker or holding anything the marker does not list.
/// An existing results directory of txop's is refused without `force`.
pub fn check_output(dir: &Path, force: bool, protected: &Protected) -> Result<Existing, String> {
    if dir.as_os_str().is_empty() {
        return Err("empty path".into());
    }
    let meta = match std::fs::symlink_metadata(dir) {
        Ok(m) => m,
        Err(e)
            if matches!(
                e.kind(),
                std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory
            ) =>
        {
            // `x/..` and the like name a directory that exists through a missing one
            // only on paper; a path ending in `..` or `.` is refused outright.
            if matches!(
                dir.components().next_back(),
                Some(Component::ParentDir | Component::CurDir | Component::RootDir)
            ) {
                return Err("not a directory name a results directory can take".into());
            }
            return Ok(Existing::Absent);
        }
        Err(e) => return Err(format!("cannot inspect: {e}")),
    };
    if let Ok(canonical) = std::fs::canonicalize(dir) {
        if canonical.parent().is_none() {
            return Err("the root directory is never a results directory".into());
        }
        if protected.home.as_deref() == Some(canonical.as_path()) {
            return Err("the home directory is never a results directory".into());
        }
        if let Some(cwd) = &protected.cwd {
            if cwd.starts_with(&canonical) {
                return Err(if *cwd == canonical {
                    "the current directory is never a results directory".into()
                } else {
                    "a parent of the current directory is never a results directory".into()
                });
            }
        }
    }
    if meta.file_type().is_symlink() {
        return Err("a symbolic link; give the directory it points to, or another name".into());
    }
    if !meta.is_dir() {
        return Err("exists and is not a directory".into());
    }
    match txop_wrote(dir) {
        Ok(()) if force => Ok(Existing::Ours),
        Ok(()) => Err("output directory exists (use --force to replace it)".into()),
        Err(why) => Err(format!(
            "output directory exists and {why}: txop replaces only its own results directories; choose another"
        )),
    }
}

/// `Ok` if `dir` carries the marker and holds exactly the files it lists; else why not.
fn txop_wrote(dir: &Path) -> Result<(), String> {
    let marker = dir.join(MARKER);
    match std::fs::symlink_metadata(&marker) {
        Ok(m) if m.is_file() => {}
        _ => return Err(format!("was not written by txop (no {MARKER} file)")),
    }
    let text = std::fs::read_to_string(&marker)
        .map_err(|e| format!("its {MARKER} cannot be read ({e})"))?;
    let mut lines = text.lines();
    if lines.next() != Some(MARKER_HEADER) {
        return Err(format!("its {MARKER} file is not txop's"));
    }
    let listed: BTreeSet<&str> = lines.filter(|l| !l.is_empty()).collect();
    let entries = std::fs::read_dir(dir).map_err(|e| format!("cannot be listed ({e})"))?;
    for entry in entries {
        let entry = entry.map_err(|e| format!("cannot be listed ({e})"))?;
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if name == MARKER {
            continue;
        }
        let is_file = entry.file_type().map(|t| t.is_file()).unwrap_or(false);
        if !is_file || !listed.contains(name.as_ref()) {
            return Err(format!("holds `{name}`, which txop did not write there"));
        }
    }
    Ok(())
}

/// The marker file's contents for a directory holding `names`.
fn marker_text(names: &[&str]) -> String {
    let mut s = String::from(MARKER_HEADER);
    s.push('\n');
    for n in names {
        s.push_str(n);
        s.push('\n');
    }
    s
}

/// A file name txop may write: one plain component (no separator, not `.`/`..`),
/// not the marker's own name.
fn plain_name(name: &str) -> bool {
    let mut parts = Path::new(name).components();
    matches!(parts.next(), Some(Component::Normal(_)))
        && parts.next().is_none()
        && !name.contains(['/', '\\', '\n'])
        && name != MARKER
}

/// A temporary directory that removes itself unless kept: what is built under a
/// temporary name is gone again if anything fails, a panic included.
struct TempDir {
    path: PathBuf,
    keep: bool,
}

impl Drop for TempDir {
    fn drop(&mut self) {
        if !self.keep {
            let _ = std::fs::remove_dir_all(&self.path);
        }
    }
}

/// Write `files` as the results directory `dir` (checked with [`check_output`]),
/// with the marker. Errors are one line without the path.
pub fn write(
    dir: &Path,
    force: bool,
    protected: &Protected,
    files: &[(String, Vec<u8>)],
) -> Result<(), String> {
    write_observed(dir, force, protected, files, &mut |_| {})
}

/// [`write`], telling `observe` each step of the replacement as it is done
/// ("built", "old aside", "new in place", "old removed"), for the tests of its order.
fn write_observed(
    dir: &Path,
    force: bool,
    protected: &Protected,
    files: &[(String, Vec<u8>)],
    observe: &mut dyn FnMut(&str),
) -> Result<(), String> {
    let existing = check_output(dir, force, protected)?;
    let mut names = Vec::with_capacity(files.len());
    for (name, _) in files {
        if !plain_name(name) {
            return Err(format!("`{name}` is not a plain file name"));
        }
        names.push(name.as_str());
    }
    let base = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "results".into());
    let parent = dir
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let pid = std::process::id();
    let tmp = TempDir {
        path: parent.join(format!(".{base}.partial-{pid}")),
        keep: false,
    };
    std::fs::create_dir_all(&tmp.path).map_err(|e| format!("cannot create the directory: {e}"))?;
    for (name, bytes) in files {
        std::fs::write(tmp.path.join(name), bytes)
            .map_err(|e| format!("cannot write {name}: {e}"))?;
    }
    std::fs::write(tmp.path.join(MARKER), marker_text(&names))
        .map_err(|e| format!("cannot write {MARKER}: {e}"))?;
    observe("built");
    let aside = match existing {
        Existing::Absent => None,
        Existing::Ours => {
            let aside = parent.join(format!(".{base}.old-{pid}"));
            std::fs::rename(dir, &aside)
                .map_err(|e| format!("cannot move the old directory aside: {e}"))?;
            observe("old aside");
            Some(aside)
        }
    };
    if let Err(e) = std::fs::rename(&tmp.path, dir) {
        if let Some(aside) = &aside {
            let _ = std::fs::rename(aside, dir);
        }
        return Err(format!("cannot move the results into place: {e}"));
    }
    let mut tmp = tmp;
    tmp.keep = true;
    observe("new in place");
    if let Some(aside) = aside {
        std::fs::remove_dir_all(&aside).map_err(|e| {
            format!(
                "the new results are in place, but the old ones at {} could not be removed: {e}",
                aside.display()
            )
        })?;
        observe("old removed");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A scratch directory for one test, removed at the end.
    struct Scratch(PathBuf);

    impl Scratch {
        fn new(name: &str) -> Scratch {
            let d = std::env::temp_dir()
                .join(format!("txop-results-dir-{name}-{}", std::process::id()));
            let _ = std::fs::remove_dir_all(&d);
            std::fs::create_dir_all(&d).unwrap();
            Scratch(std::fs::canonicalize(&d).unwrap())
        }
    }

    impl Drop for Scratch {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    fn files(text: &str) -> Vec<(String, Vec<u8>)> {
        vec![
            ("summary.txt".into(), text.as_bytes().to_vec()),
            ("results.json".into(), b"{}".to_vec()),
        ]
    }

    /// As seen by a process whose current directory is `cwd`, home `home`.
    fn at(cwd: &Path, home: Option<&Path>) -> Protected {
        Protected {
            cwd: Some(cwd.to_path_buf()),
            home: home.map(Path::to_path_buf),
        }
    }

    #[test]
    fn current_parent_root_and_home_are_refused_whatever_they_hold() {
        let s = Scratch::new("protected");
        let cwd = s.0.join("work/here");
        std::fs::create_dir_all(&cwd).unwrap();
        let p = at(&cwd, Some(&s.0));
        for (dir, why) in [
            (cwd.join("."), "current directory"),
            (cwd.clone(), "current directory"),
            (cwd.join(".."), "parent of the current directory"),
            (cwd.join("../.."), "home directory"),
            (PathBuf::from("/"), "root directory"),
            (cwd.join("../../../../../../../../../.."), "root directory"),
        ] {
            for force in [false, true] {
                let e = check_output(&dir, force, &p).unwrap_err();
                assert!(e.contains(why), "{}: {e}", dir.display());
            }
        }
        // Even when the current directory carries the marker and nothing else.
        std::fs::write(cwd.join(MARKER), marker_text(&[])).unwrap();
        assert!(check_output(&cwd, true, &p).is_err());
        // The home directory is refused as such even when it is not an ancestor.
        let home = s.0.join("home");
        std::fs::create_dir_all(&home).unwrap();
        let e = check_output(&home, true, &at(&cwd, Some(&home))).unwrap_err();
        assert!(e.contains("home directory"), "{e}");
    }

    #[test]
    fn a_directory_txop_did_not_write_survives_force() {
        let s = Scratch::new("users");
        let p = at(&s.0, None);
        let thesis = s.0.join("thesis");
        std::fs::create_dir_all(&thesis).unwrap();
        std::fs::write(thesis.join("thesis.tex"), "years of work").unwrap();
        let e = write(&thesis, true, &p, &files("plots")).unwrap_err();
        assert!(e.contains("not written by txop"), "{e}");
        assert_eq!(
            std::fs::read_to_string(thesis.join("thesis.tex")).unwrap(),
            "years of work"
        );
        assert!(!thesis.join("summary.txt").exists());
        // An empty directory without the marker is not txop's either.
        let empty = s.0.join("empty");
        std::fs::create_dir_all(&empty).unwrap();
        assert!(write(&empty, true, &p, &files("x")).is_err());
        // Nothing temporary is left beside them.
        let mut names: Vec<String> = std::fs::read_dir(&s.0)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        assert_eq!(names, ["empty", "thesis"]);
    }

    #[test]
    fn a_file_the_user_added_to_a_results_directory_protects_it() {
        let s = Scratch::new("added");
        let p = at(&s.0, None);
        let out = s.0.join("out");
        write(&out, false, &p, &files("first")).unwrap();
        std::fs::write(out.join("notes.md"), "mine").unwrap();
        let e = write(&out, true, &p, &files("second")).unwrap_err();
        assert!(e.contains("`notes.md`"), "{e}");
        assert_eq!(
            std::fs::read_to_string(out.join("notes.md")).unwrap(),
            "mine"
        );
        assert_eq!(
            std::fs::read_to_string(out.join("summary.txt")).unwrap(),
            "first"
        );
        // A subdirectory is not txop's either.
        std::fs::remove_file(out.join("notes.md")).unwrap();
        std::fs::create_dir(out.join("summary.d")).unwrap();
        assert!(write(&out, true, &p, &files("second")).is_err());
        // A forged or foreign marker is not txop's.
        std::fs::remove_dir(out.join("summary.d")).unwrap();
        std::fs::write(out.join(MARKER), "hello\nsummary.txt\nresults.json\n").unwrap();
        let e = write(&out, true, &p, &files("second")).unwrap_err();
        assert!(e.contains("not txop's"), "{e}");
    }

    #[test]
    fn files_devices_and_links_are_refused() {
        let s = Scratch::new("kinds");
        let p = at(&s.0, None);
        let file = s.0.join("file");
        std::fs::write(&file, "data").unwrap();
        for force in [false, true] {
            let e = check_output(&file, force, &p).unwrap_err();
            assert!(e.contains("not a directory"), "{e}");
        }
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "data");
        let e = check_output(Path::new("/dev/null"), true, &p).unwrap_err();
        assert!(e.contains("not a directory"), "{e}");
        // A link to a results directory of txop's: the link is not replaced.
        let real = s.0.join("real");
        write(&real, false, &p, &files("x")).unwrap();
        let link = s.0.join("link");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        let e = check_output(&link, true, &p).unwrap_err();
        assert!(e.contains("symbolic link"), "{e}");
        assert!(check_output(Path::new(""), true, &p).is_err());
    }

    #[test]
    fn a_results_directory_is_replaced_only_with_force() {
        let s = Scratch::new("replace");
        let p = at(&s.0, None);
        let out = s.0.join("out");
        assert_eq!(check_output(&out, false, &p), Ok(Existing::Absent));
        let mut first = files("first");
        first.push(("extra.svg".into(), b"<svg/>".to_vec()));
        write(&out, false, &p, &first).unwrap();
        let marker = std::fs::read_to_string(out.join(MARKER)).unwrap();
        assert!(
            marker.ends_with("summary.txt\nresults.json\nextra.svg\n"),
            "{marker}"
        );
        let e = write(&out, false, &p, &files("second")).unwrap_err();
        assert!(e.contains("--force"), "{e}");
        assert_eq!(check_output(&out, true, &p), Ok(Existing::Ours));
        write(&out, true, &p, &files("second")).unwrap();
        assert_eq!(
            std::fs::read_to_string(out.join("summary.txt")).unwrap(),
            "second"
        );
        assert!(!out.join("extra.svg").exists(), "the old files are gone");
        // And again: a replaced directory is txop's too.
        write(&out, true, &p, &files("third")).unwrap();
        let names: Vec<_> = std::fs::read_dir(&s.0).unwrap().collect();
        assert_eq!(names.len(), 1, "nothing left beside it");
    }

    /// The old directory still exists, aside, when the new one arrives; it is removed
    /// only afterwards. If the new one cannot be moved into place the old one is put
    /// back.
    #[test]
    fn the_old_directory_goes_only_after_the_new_is_in_place() {
        let s = Scratch::new("order");
        let p = at(&s.0, None);
        let out = s.0.join("out");
        write(&out, false, &p, &files("old")).unwrap();
        let aside = s.0.join(format!(".out.old-{}", std::process::id()));
        let mut steps = Vec::new();
        write_observed(&out, true, &p, &files("new"), &mut |step| {
            if step == "new in place" {
                let old = std::fs::read_to_string(aside.join("summary.txt")).unwrap();
                let new = std::fs::read_to_string(out.join("summary.txt")).unwrap();
                assert_eq!((old.as_str(), new.as_str()), ("old", "new"));
            }
            steps.push(step.to_string());
        })
        .unwrap();
        assert_eq!(steps, ["built", "old aside", "new in place", "old removed"]);
        assert!(!aside.exists());
        // The move into place fails (the temporary directory vanished): the old one
        // is back where it was, complete.
        let tmp = s.0.join(format!(".out.partial-{}", std::process::id()));
        let e = write_observed(&out, true, &p, &files("newer"), &mut |step| {
            if step == "old aside" {
                std::fs::remove_dir_all(&tmp).unwrap();
            }
        })
        .unwrap_err();
        assert!(e.contains("cannot move the results into place"), "{e}");
        assert_eq!(
            std::fs::read_to_string(out.join("summary.txt")).unwrap(),
            "new"
        );
        assert_eq!(check_output(&out, true, &p), Ok(Existing::Ours));
    }

    #[test]
    fn file_names_must_be_plain() {
        let s = Scratch::new("names");
        let p = at(&s.0, None);
        for bad in ["../x", "a/b", "..", ".", MARKER, ""] {
            let out = s.0.join("out");
            let e = write(&out, false, &p, &[(bad.to_string(), vec![])]).unwrap_err();
            assert!(e.contains("plain file name"), "{bad}: {e}");
            assert!(!out.exists());
        }
    }

    /// A panic while the directory is being built (here: inside `observe`) leaves
    /// nothing behind: the temporary directory removes itself as the stack unwinds.
    #[test]
    fn a_panic_while_building_leaves_nothing() {
        let s = Scratch::new("panic");
        let p = at(&s.0, None);
        let out = s.0.join("out");
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let _ = write_observed(&out, false, &p, &files("x"), &mut |step| {
                if step == "built" {
                    panic!("injected");
                }
            });
        }));
        assert!(r.is_err());
        assert_eq!(std::fs::read_dir(&s.0).unwrap().count(), 0);
    }
}
