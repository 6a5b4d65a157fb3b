//! An npm registry on the loopback address, serving the packages an
//! installed `node_modules` holds, so that `yohost add` installs a
//! package's dependencies with no internet; and a package packed as npm
//! publishes it.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// A registry serving each package found under some `node_modules`
/// folders, every version of it found there. It serves until the test
/// process ends.
pub struct LocalRegistry {
    url: String,
}

/// What the registry serves: each package's document by name, and the
/// tarballs by number.
struct Served {
    documents: std::collections::BTreeMap<String, serde_json::Value>,
    tarballs: Vec<Vec<u8>>,
}

impl LocalRegistry {
    /// A registry of every package installed in the `node_modules` of each
    /// of `installed`.
    pub fn serving(installed: &[&Path]) -> LocalRegistry {
        let listener = TcpListener::bind("127.0.0.1:0").expect("a loopback port");
        let url = format!("http://{}/", listener.local_addr().unwrap());
        let mut served = Served {
            documents: Default::default(),
            tarballs: Vec::new(),
        };
        let mut folders = Vec::new();
        for folder in installed {
            packages_in(&folder.join("node_modules"), &mut folders);
        }
        for folder in folders {
            served.add(&folder, &url);
        }
        let served = Arc::new(served);
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let served = Arc::clone(&served);
                std::thread::spawn(move || served.answer(stream));
            }
        });
        LocalRegistry { url }
    }

    /// The environment `yohost add` needs to install from this registry,
    /// with npm's cache in `cache` (not the user's, so nothing comes from
    /// elsewhere).
    pub fn env(&self, cache: &Path) -> Vec<(String, String)> {
        vec![
            ("npm_config_registry".into(), self.url.clone()),
            ("npm_config_cache".into(), cache.display().to_string()),
        ]
    }
}

impl Served {
    /// Serve the package in `folder`.
    fn add(&mut self, folder: &Path, url: &str) {
        let Ok(text) = std::fs::read_to_string(folder.join("package.json")) else {
            return;
        };
        let mut manifest: serde_json::Value = serde_json::from_str(&text).unwrap();
        let (Some(name), Some(version)) = (
            manifest["name"].as_str().map(str::to_string),
            manifest["version"].as_str().map(str::to_string),
        ) else {
            return;
        };
        let document = self.documents.entry(name.clone()).or_insert_with(
            || serde_json::json!({"name": name, "dist-tags": {"latest": version}, "versions": {}}),
        );
        if document["versions"].get(&version).is_some() {
            return;
        }
        let number = self.tarballs.len();
        self.tarballs.push(packed(folder));
        manifest["dist"] = serde_json::json!({"tarball": format!("{url}-/tarballs/{number}.tgz")});
        document["versions"][&version] = manifest;
    }

    /// Answer one request on `stream`, and close it.
    fn answer(&self, mut stream: TcpStream) {
        let mut reader = BufReader::new(&stream);
        let mut request = String::new();
        if reader.read_line(&mut request).is_err() {
            return;
        }
        loop {
            let mut header = String::new();
            match reader.read_line(&mut header) {
                Ok(0) | Err(_) => break,
                Ok(_) if header.trim().is_empty() => break,
                Ok(_) => {}
            }
        }
        let path = request.split(' ').nth(1).unwrap_or("/");
        let path = path
            .trim_start_matches('/')
            .replace("%2f", "/")
            .replace("%2F", "/")
            .replace("%40", "@");
        let found: Option<(&str, Vec<u8>)> = match path.strip_prefix("-/tarballs/") {
            Some(file) => file
                .trim_end_matches(".tgz")
                .parse::<usize>()
                .ok()
                .and_then(|n| self.tarballs.get(n))
                .map(|t| ("application/octet-stream", t.clone())),
            None => self
                .documents
                .get(&path)
                .map(|d| ("application/json", d.to_string().into_bytes())),
        };
        let (status, kind, body) = match found {
            Some((kind, body)) => ("200 OK", kind, body),
            None => ("404 Not Found", "application/json", b"{}".to_vec()),
        };
        let head = format!(
            "HTTP/1.1 {status}\r\ncontent-type: {kind}\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
            body.len()
        );
        let _ = stream.write_all(head.as_bytes());
        let _ = stream.write_all(&body);
    }
}

/// The package folders under `node_modules` (scoped ones too), and those
/// nested in their own `node_modules`.
fn packages_in(node_modules: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(node_modules) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with('.') || !path.is_dir() {
            continue;
        }
        if name.starts_with('@') {
            packages_in(&path, out);
        } else {
            packages_in(&path.join("node_modules"), out);
            out.push(path);
        }
    }
}

/// The package in `folder` as npm packs it: a gzipped tarball of its files
/// under `package/`, without its `node_modules` and `package-lock.json`.
pub fn packed(folder: &Path) -> Vec<u8> {
    let gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    let mut builder = tar::Builder::new(gz);
    let mut stack = vec![folder.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let mut entries: Vec<_> = std::fs::read_dir(&dir).unwrap().flatten().collect();
        entries.sort_by_key(|e| e.file_name());
        for entry in entries {
            let path = entry.path();
            let name = entry.file_name();
            let kind = entry.file_type().unwrap();
            if dir == folder && (name == "node_modules" || name == "package-lock.json") {
                continue;
            }
            let inside = Path::new("package").join(path.strip_prefix(folder).unwrap());
            if kind.is_dir() {
                stack.push(path);
            } else if kind.is_file() {
                let mut bytes = Vec::new();
                std::fs::File::open(&path)
                    .unwrap()
                    .read_to_end(&mut bytes)
                    .unwrap();
                let mut header = tar::Header::new_gnu();
                header.set_size(bytes.len() as u64);
                header.set_mode(0o644);
                header.set_entry_type(tar::EntryType::Regular);
                builder
                    .append_data(&mut header, inside, bytes.as_slice())
                    .unwrap();
            }
        }
    }
    builder.into_inner().unwrap().finish().unwrap()
}
