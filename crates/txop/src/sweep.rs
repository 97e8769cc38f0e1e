//! `txop sweep`: handed to the Python package `txop` (`python3 -m txop sweep …`),
//! which runs the grid on a local process pool or a Dask cluster and writes the
//! xarray dataset (python/txop/__main__.py). The Python side owns the options; this
//! only finds the interpreter and becomes it (`exec`, on Unix): the process a user or
//! a job scheduler signals is the sweep itself, which stops its workers, rather than a
//! parent whose death would leave them running.

use std::process::{Command, ExitCode};

/// The interpreter: `$TXOP_PYTHON`, else `python3`.
fn python() -> String {
    std::env::var("TXOP_PYTHON")
        .ok()
        .filter(|p| !p.is_empty())
        .unwrap_or_else(|| "python3".to_string())
}

/// `args` with `--kernel-src DIR` (or `--kernel-src=DIR`) as the `--set kernel.src=DIR`
/// it stands for (as on `txop run`), which the Python side passes to every run.
fn kernel_src_as_set(args: &[String]) -> Vec<String> {
    let mut out = Vec::with_capacity(args.len());
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let dir = match a.strip_prefix("--kernel-src") {
            Some("") => it.next().cloned(),
            Some(v) if v.starts_with('=') => Some(v[1..].to_string()),
            _ => None,
        };
        match dir {
            Some(dir) => {
                out.push("--set".to_string());
                out.push(crate::kernel_src_set(std::path::Path::new(&dir)));
            }
            None => out.push(a.clone()),
        }
    }
    out
}

/// Become `python3 -m txop sweep ARGS…` (on Unix; elsewhere run it and exit with its
/// code); one line (exit 2) if the interpreter or the package is missing.
pub(crate) fn main(args: &[String]) -> ExitCode {
    let py = python();
    let found = Command::new(&py)
        .args(["-c", "import txop._txop"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status();
    if !found.is_ok_and(|s| s.success()) {
        eprintln!(
            "txop: error: `txop sweep` needs the Python package txop in `{py}` \
             (./scripts/setup.sh builds and installs it; TXOP_PYTHON names another interpreter)"
        );
        return ExitCode::from(2);
    }
    let mut sweep = Command::new(&py);
    sweep
        .args(["-m", "txop", "sweep"])
        .args(kernel_src_as_set(args));
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
        // Returns only if the exec failed.
        let e = sweep.exec();
        eprintln!("txop: error: cannot run {py}: {e}");
        ExitCode::from(2)
    }
    #[cfg(not(unix))]
    match sweep.status() {
        Ok(status) => match status.code() {
            Some(code) => ExitCode::from(u8::try_from(code).unwrap_or(1)),
            None => ExitCode::from(130),
        },
        Err(e) => {
            eprintln!("txop: error: cannot run {py}: {e}");
            ExitCode::from(2)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Both spellings of `--kernel-src` become `--set kernel.src=` with the path made
    /// absolute; everything else passes through in order.
    #[test]
    fn kernel_src_becomes_a_set_of_kernel_src() {
        let args: Vec<String> = [
            "default",
            "--kernel-src",
            "linux-patched",
            "--vary",
            "stations.count=1,2",
            "--kernel-src=/src/linux",
            "--seeds",
            "1-2",
        ]
        .map(String::from)
        .to_vec();
        let cwd = std::env::current_dir().unwrap();
        let expected: Vec<String> = [
            "default".to_string(),
            "--set".into(),
            format!("kernel.src={}", cwd.join("linux-patched").display()),
            "--vary".into(),
            "stations.count=1,2".into(),
            "--set".into(),
            "kernel.src=/src/linux".into(),
            "--seeds".into(),
            "1-2".into(),
        ]
        .to_vec();
        assert_eq!(kernel_src_as_set(&args), expected);
    }
}
