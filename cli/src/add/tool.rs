//! The programs `add` runs on a package's behalf (npm, pip), in the
//! kernel sandbox that plugin processes run in
//! (`yohost::adapter::sandbox::ProcessSandbox::for_host_tool`): each may
//! write only the stage and its own cache, read what it names and the
//! system, reach the network, and start nothing it could not start there.
//! Each is stopped after ten minutes, its output is held to a bound, and
//! what it says on failure is escaped before it reaches the terminal.

use crate::output::escaped;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use yohost::adapter::sandbox::ProcessSandbox;
use yohost::manifest::{Capabilities, Network};

/// The longest a tool may take for one command: ten minutes.
const DEADLINE: Duration = Duration::from_secs(600);

/// The most bytes of a tool's output that are kept, of each stream.
const OUTPUT_LIMIT: u64 = 4 << 20;

/// The variables of the host's environment that every tool gets: where a
/// proxy and the system's certificates are.
const NETWORK_ENV: &[&str] = &[
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "HTTPS_PROXY",
    "HTTP_PROXY",
    "NO_PROXY",
    "https_proxy",
    "http_proxy",
    "no_proxy",
];

/// A program `add` runs in the sandbox, and what it may touch.
pub struct Tool<'a> {
    /// The program: a name on the PATH, or a path.
    pub program: &'a str,
    /// The programs whose installations it runs from (`npm` and `node`),
    /// which it may read wherever they are installed.
    pub runtime: &'a [&'a str],
    /// What it may read besides the stage and the system.
    pub reads: Vec<PathBuf>,
    /// What it may write besides the stage: its cache.
    pub writes: Vec<PathBuf>,
    /// The variables of the host's environment it gets besides the
    /// sandbox's base ones and [`NETWORK_ENV`].
    pub env: &'a [&'a str],
}

impl Tool<'_> {
    /// Run the tool with `args` in `cwd` in the sandbox, which may write
    /// `stage` and the tool's own folders, saying every few seconds that
    /// it still works; its standard output.
    pub fn run(&self, args: &[&str], cwd: &Path, stage: &Path) -> Result<Vec<u8>, String> {
        let program = self.program.rsplit('/').next().unwrap_or(self.program);
        // What it is doing, as a person would say it: `npm install`, `pip`.
        let name = match args {
            ["-m", module, ..] => module.to_string(),
            [first, ..] => format!("{program} {first}"),
            [] => program.to_string(),
        };
        let mut capabilities = Capabilities::default();
        capabilities.read = self.reads.clone();
        capabilities.write = vec![stage.to_path_buf()];
        capabilities.write.extend(self.writes.iter().cloned());
        capabilities.env = NETWORK_ENV
            .iter()
            .chain(self.env)
            .map(|v| v.to_string())
            .collect();
        capabilities.network = Network::Granted(true);
        capabilities.exec = true;
        let sandbox = ProcessSandbox::for_host_tool(stage, &capabilities)
            .map_err(|e| format!("{name} cannot run in the sandbox here: {e}"))?;
        let mut command = sandbox.command(self.program);
        command
            .args(args)
            .current_dir(cwd)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        let slot = sandbox
            .reserve()
            .map_err(|e| format!("cannot run {name}: {e}"))?;
        let mut process = sandbox
            .spawn(slot, command, &runtime_folders(self.runtime))
            .map_err(|e| format!("cannot run {name}: {e}"))?;
        let child = process.child();
        let stdout = child.stdout.take().map(read_bounded);
        let stderr = child.stderr.take().map(read_bounded);
        let started = Instant::now();
        let mut said = 0;
        while !process.has_exited() {
            let seconds = started.elapsed().as_secs();
            if started.elapsed() > DEADLINE {
                process.end();
                return Err(format!(
                    "{name} took more than {} minutes and was stopped",
                    DEADLINE.as_secs() / 60
                ));
            }
            if seconds >= said + 5 {
                said = seconds;
                println!("  {name} is still working ({seconds} s)");
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        let status = process.end();
        let collect = |reader: Option<std::thread::JoinHandle<Vec<u8>>>| {
            reader.and_then(|r| r.join().ok()).unwrap_or_default()
        };
        let (out, err) = (collect(stdout), collect(stderr));
        if !status.is_some_and(|s| s.success()) {
            let err = String::from_utf8_lossy(&err);
            let last: Vec<&str> = err.trim().lines().rev().take(20).collect();
            let last: Vec<String> = last
                .into_iter()
                .rev()
                .map(|l| escaped(l).into_owned())
                .collect();
            return Err(format!(
                "{program} {} failed: {}",
                args.join(" "),
                last.join("\n  ")
            ));
        }
        Ok(out)
    }
}

/// Read `pipe` to its end on a thread of its own, keeping at most
/// [`OUTPUT_LIMIT`] bytes.
fn read_bounded(pipe: impl Read + Send + 'static) -> std::thread::JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut kept = Vec::new();
        let mut pipe = pipe;
        let _ = (&mut pipe).take(OUTPUT_LIMIT).read_to_end(&mut kept);
        let _ = std::io::copy(&mut pipe, &mut std::io::sink());
        kept
    })
}

/// The folders of `programs` outside the system's, which the sandbox
/// must let the tool read (an npm installed under `/opt`, say): the folder
/// above each one's real `bin` folder.
fn runtime_folders(programs: &[&str]) -> Vec<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    programs
        .iter()
        .filter_map(|program| {
            std::env::split_paths(&path)
                .map(|dir| dir.join(program))
                .find(|candidate| candidate.is_file())
        })
        .filter_map(|found| found.canonicalize().ok())
        .filter_map(|real| Some(real.parent()?.parent()?.to_path_buf()))
        .filter(|folder| folder.components().count() > 2)
        .collect()
}
