//! `-o DIR --force` never loses a user's data (issue 18, item 1): it replaces only a
//! results directory txop wrote and left as it was. Every case runs in a scratch
//! directory; `-o /` is refused by the same check that `-o .` and `-o ..` go
//! through, tested as a function in `results_dir` (not by risking `/` here).

mod support;
use std::path::Path;
use std::process::{Command, Output};
use support::*;

/// `txop run default` for 0.5 s with `args`, in `cwd`, with `home` as $HOME.
fn run_in(cwd: &Path, home: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_txop"))
        .args(["run", "default", "--set", "duration_s=0.5", "-q"])
        .args(args)
        .current_dir(cwd)
        .env("HOME", home)
        .output()
        .expect("run txop")
}

/// Exit 2 with one line on stderr holding every needle.
fn refused(o: &Output, needles: &[&str]) {
    let err = stderr(o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    for n in needles {
        assert!(err.contains(n), "{err:?} lacks {n:?}");
    }
}

fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

#[test]
fn dot_and_dotdot_are_refused_and_left_alone() {
    let root = scratch("out-dots");
    let cwd = root.join("project/work");
    std::fs::create_dir_all(&cwd).unwrap();
    std::fs::write(cwd.join("data.csv"), "precious").unwrap();
    std::fs::write(root.join("project/notes.txt"), "also precious").unwrap();
    for (dir, why) in [
        (".", "current directory"),
        ("./", "current directory"),
        ("..", "parent of the current directory"),
        ("../..", "parent of the current directory"),
        ("../work", "current directory"),
    ] {
        for force in [&["--force"][..], &[]] {
            let mut args = vec!["-o", dir];
            args.extend(force);
            let o = run_in(&cwd, &root.join("nohome"), &args);
            refused(&o, &[&format!("{dir}: "), why]);
        }
    }
    assert_eq!(names(&cwd), ["data.csv"]);
    assert_eq!(names(&root.join("project")), ["notes.txt", "work"]);
    assert_eq!(
        std::fs::read_to_string(cwd.join("data.csv")).unwrap(),
        "precious"
    );
    std::fs::remove_dir_all(&root).ok();
}

#[test]
fn the_home_directory_is_refused() {
    let root = scratch("out-home");
    let home = root.join("home");
    let cwd = root.join("elsewhere");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(&cwd).unwrap();
    std::fs::write(home.join(".bashrc"), "mine").unwrap();
    let h = home.to_str().unwrap();
    let o = run_in(&cwd, &home, &["-o", h, "--force"]);
    refused(&o, &["home directory"]);
    // Through another spelling of the same directory too.
    let o = run_in(&cwd, &home, &["-o", "../home/.", "--force"]);
    refused(&o, &["home directory"]);
    assert_eq!(names(&home), [".bashrc"]);
    std::fs::remove_dir_all(&root).ok();
}

#[test]
fn a_users_directory_and_a_file_survive_force() {
    let root = scratch("out-users");
    let thesis = root.join("thesis");
    std::fs::create_dir_all(&thesis).unwrap();
    std::fs::write(thesis.join("chapter1.tex"), "years of work").unwrap();
    let o = run_in(&root, &root, &["-o", "thesis", "--force"]);
    refused(&o, &["thesis: ", "not written by txop"]);
    assert_eq!(names(&thesis), ["chapter1.tex"]);
    // An empty directory of the user's is not txop's either.
    std::fs::create_dir_all(root.join("empty")).unwrap();
    refused(
        &run_in(&root, &root, &["-o", "empty", "--force"]),
        &["not written by txop"],
    );
    // A file is not a directory.
    std::fs::write(root.join("file.txt"), "text").unwrap();
    refused(
        &run_in(&root, &root, &["-o", "file.txt", "--force"]),
        &["file.txt: exists and is not a directory"],
    );
    assert_eq!(
        std::fs::read_to_string(root.join("file.txt")).unwrap(),
        "text"
    );
    assert_eq!(names(&root), ["empty", "file.txt", "thesis"]);
    std::fs::remove_dir_all(&root).ok();
}

#[test]
fn a_txop_directory_is_replaced_with_force_unless_the_user_added_to_it() {
    let root = scratch("out-replace");
    let o = run_in(&root, &root, &["-o", "out"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = root.join("out");
    let first = names(&out);
    assert!(first.contains(&".txop-results".to_string()), "{first:?}");
    assert!(first.contains(&"summary.txt".to_string()), "{first:?}");
    // Without --force: refused, pointing to --force.
    refused(&run_in(&root, &root, &["-o", "out"]), &["--force"]);
    // With --force: replaced, by another run's results (another seed).
    let before = std::fs::read(out.join("results.json")).unwrap();
    let o = run_in(&root, &root, &["-o", "out", "--force", "--seed", "9"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_ne!(std::fs::read(out.join("results.json")).unwrap(), before);
    assert_eq!(names(&out), first);
    assert_eq!(names(&root), ["out"], "nothing left beside it");
    // Once the user has put a file of theirs into it, it is theirs.
    std::fs::write(out.join("analysis.py"), "print(1)").unwrap();
    refused(
        &run_in(&root, &root, &["-o", "out", "--force"]),
        &["`analysis.py`", "txop did not write"],
    );
    assert!(out.join("analysis.py").exists());
    std::fs::remove_dir_all(&root).ok();
}
