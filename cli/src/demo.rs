//! The bundled demo of `yohost run`: without `--script` or `--model`, the
//! built-in scripted model plays `default-script.json` inside a folder the
//! command makes, so the demo is harmless whatever plugins are loaded (or
//! none):
//! - the folder is `yohost-demo-XXXXXX/` in the system's temporary
//!   directory, removed when the run ends; its `work/` subfolder (seeded
//!   with a `build/` folder and a `motto.txt`) is the process's working
//!   directory and `bash`'s;
//! - the file tools refuse any path outside the folder (resolved, so `..`
//!   and symlinks cannot lead out);
//! - the script itself names only relative paths: the one that reaches
//!   above the working directory (`../outside.txt`, which the example
//!   policies deny) still lands inside the folder.

use std::path::{Path, PathBuf};
use yoagent::tools::{
    BashTool, EditFileTool, ListFilesTool, ReadFileTool, SearchTool, WriteFileTool,
};
use yoagent::AgentTool;

/// The temporary folder the demo acts in; removed when dropped.
pub struct DemoFolder {
    root: tempfile::TempDir,
    work: PathBuf,
}

impl DemoFolder {
    /// Make the folder and seed its working directory.
    pub fn create() -> Result<Self, String> {
        let fail = |e: std::io::Error| format!("cannot make the demo folder: {e}");
        let root = tempfile::Builder::new()
            .prefix("yohost-demo-")
            .tempdir()
            .map_err(fail)?;
        let work = root.path().canonicalize().map_err(fail)?.join("work");
        std::fs::create_dir_all(work.join("build")).map_err(fail)?;
        std::fs::write(work.join("build/app.bin"), "a build output\n").map_err(fail)?;
        std::fs::write(
            work.join("motto.txt"),
            "plugins change what an agent does without rebuilding it\n",
        )
        .map_err(fail)?;
        Ok(Self { root, work })
    }

    /// The working directory inside the folder.
    pub fn work(&self) -> &Path {
        &self.work
    }

    /// The folder itself.
    pub fn root(&self) -> &Path {
        self.root.path()
    }

    /// yoagent's default tools, confined to the folder: `bash` and `search`
    /// start in the working directory, and every file tool refuses a path
    /// outside the folder.
    pub fn tools(&self) -> Vec<Box<dyn AgentTool>> {
        let work = self.work.to_string_lossy().into_owned();
        let allowed = || vec![self.root().to_string_lossy().into_owned()];
        vec![
            Box::new(BashTool::default().with_cwd(work.clone())),
            Box::new(ReadFileTool::default().with_allowed_paths(allowed())),
            Box::new(WriteFileTool::new().with_allowed_paths(allowed())),
            Box::new(EditFileTool::new().with_allowed_paths(allowed())),
            Box::new(ListFilesTool::default().with_allowed_paths(allowed())),
            Box::new(
                SearchTool::default()
                    .with_root(work)
                    .with_allowed_paths(allowed()),
            ),
        ]
    }
}
