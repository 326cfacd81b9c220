//! Running kinject on a case: the executable, in the case's folder, with standard input
//! piped in, its output taken whole.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The kinject executable cases run.
#[derive(Debug, Clone)]
pub struct Runner {
    exe: PathBuf,
    /// The case folders may come from a pull request (`kinject test`): each run is told so.
    untrusted: bool,
}

/// How one run ended: its exit code (None when a signal ended it), stdout and stderr.
#[derive(Debug, Clone)]
pub struct Ran {
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

impl Runner {
    /// Cases run `exe`.
    pub fn new(exe: PathBuf) -> Runner {
        Runner {
            exe,
            untrusted: false,
        }
    }

    /// Cases run `exe`, each run told that its case folder may come from a pull request
    /// (`KINJECT_TEST_CASE`): a configuration in the folder, even one named with `-c`, then
    /// inherits only from inside it.
    pub fn untrusted(exe: PathBuf) -> Runner {
        Runner {
            exe,
            untrusted: true,
        }
    }

    /// kinject with `args`, in `dir`, `stdin` piped in. Diagnostics as a UTF-8 terminal
    /// without colour shows them, whatever the machine's locale and terminal; the caller's
    /// `KINJECT_REPORT_FILE` is not passed on (the report is the case's stderr).
    pub fn run(&self, dir: &Path, args: &[String], stdin: &[u8]) -> Result<Ran, String> {
        let mut command = Command::new(&self.exe);
        if self.untrusted {
            command.env(crate::tree::TEST_CASE_VARIABLE, "1");
        } else {
            command.env_remove(crate::tree::TEST_CASE_VARIABLE);
        }
        let mut child = command
            .args(args)
            .current_dir(dir)
            .env("NO_COLOR", "1")
            .env("LC_ALL", "C.UTF-8")
            .env_remove("TERM")
            .env_remove("KINJECT_REPORT_FILE")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| format!("cannot run {}: {e}", self.exe.display()))?;
        let mut pipe = child.stdin.take().ok_or("no standard input")?;
        // Written on a thread while the output is read: kinject may write stderr before it
        // has read all of its input, and with both pipes full each side would wait for the
        // other.
        let out = std::thread::scope(|scope| {
            scope.spawn(move || {
                // A run that fails early may close its stdin: that is not the case's failure.
                let _ = pipe.write_all(stdin);
            });
            child.wait_with_output()
        })
        .map_err(|e| format!("waiting for {}: {e}", self.exe.display()))?;
        Ok(Ran {
            code: out.status.code(),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        })
    }
}
