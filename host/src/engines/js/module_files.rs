//! A plugin's own files as its imports reach them: a relative import
//! resolved inside the plugin's folder (symlinks resolved, the extensions
//! TypeScript and Node try), a target confined to the plugin's own paths,
//! and a source read through a handle on the folder.

use super::flavor::Builtin;
use super::guard::MAX_SOURCE_BYTES;
use super::module_set::GatherError;
use super::packages::PackageError;
use crate::load::grants::{lexical, Confined, FileError};
use std::path::{Path, PathBuf};

/// Extensions tried, in order, for a relative import without one.
const EXTENSIONS: [&str; 4] = ["ts", "mts", "js", "mjs"];

/// Whether `file` lies in an npm package installed in the plugin's folder
/// (under a `node_modules` folder of `base_dir`).
pub(super) fn in_package(base_dir: &Path, file: &Path) -> bool {
    file.strip_prefix(base_dir)
        .is_ok_and(|inside| inside.components().any(|c| c.as_os_str() == "node_modules"))
}

/// The source of `file` (symlinks resolved), read through `folder` (the
/// plugin's folder, `base_dir`) when it is inside it. Only the entry can be
/// outside: the manifest named it.
pub(super) fn read_source(
    folder: &Confined,
    base_dir: &Path,
    file: &Path,
) -> Result<String, FileError> {
    let read = match file.strip_prefix(base_dir) {
        Ok(inside) => folder.read_text(inside, MAX_SOURCE_BYTES, file),
        Err(_) => {
            let parent = file.parent().unwrap_or(Path::new("/"));
            Confined::open(parent)
                .map_err(|source| FileError::Io {
                    path: parent.to_path_buf(),
                    source,
                })
                .and_then(|dir| {
                    let name = Path::new(file.file_name().unwrap_or_default());
                    dir.read_text(name, MAX_SOURCE_BYTES, file)
                })
        }
    };
    read
}

/// The refusal for a source that could not be read.
pub(super) fn unreadable(e: FileError) -> GatherError {
    GatherError::Invalid(match e {
        // The others name the file and say what is wrong with it.
        FileError::Io { .. } => format!("cannot read {e}"),
        e => e.to_string(),
    })
}

/// The file a relative `specifier` in `from` names, inside `base_dir`, with
/// symlinks resolved.
pub(super) fn relative(
    base_dir: &Path,
    from: &Path,
    specifier: &str,
) -> Result<PathBuf, GatherError> {
    let dir = from.parent().unwrap_or(base_dir);
    let joined = lexical(&dir.join(specifier));
    if !joined.starts_with(base_dir) {
        return Err(GatherError::Refused(format!(
            "{} imports \"{specifier}\", which is outside the plugin's folder {}",
            from.display(),
            base_dir.display()
        )));
    }
    let mut tries = vec![joined.clone()];
    // TypeScript convention: `./util.js` names `util.ts`.
    if let Some(stem) = specifier.strip_suffix(".js") {
        tries.push(lexical(&dir.join(format!("{stem}.ts"))));
    }
    tries.extend(EXTENSIONS.iter().map(|ext| {
        let mut with_ext = joined.clone().into_os_string();
        with_ext.push(format!(".{ext}"));
        PathBuf::from(with_ext)
    }));
    tries.extend(
        EXTENSIONS
            .iter()
            .map(|ext| joined.join(format!("index.{ext}"))),
    );
    let found = tries.into_iter().find(|p| p.is_file()).ok_or_else(|| {
        GatherError::Invalid(format!(
            "{} imports \"{specifier}\", but there is no such file",
            from.display()
        ))
    })?;
    let real = found
        .canonicalize()
        .map_err(|e| GatherError::Invalid(format!("cannot read {}: {e}", found.display())))?;
    if !real.starts_with(base_dir) {
        return Err(GatherError::Refused(format!(
            "{} imports \"{specifier}\", which resolves to {}, outside the plugin's folder {}",
            from.display(),
            real.display(),
            base_dir.display()
        )));
    }
    Ok(real)
}

/// Whether `file` (resolved) is one of the plugin's own paths or inside one.
pub(super) fn is_own(own: &[PathBuf], file: &Path) -> bool {
    own.iter().any(|o| file.starts_with(o))
}

/// The refusal of `target` (what `specifier` in `from` resolved to),
/// outside the plugin's own paths `own`.
pub(super) fn outside_own(
    own: &[PathBuf],
    from: &Path,
    specifier: &str,
    target: &Path,
) -> GatherError {
    let own: Vec<String> = own.iter().map(|o| o.display().to_string()).collect();
    GatherError::Refused(format!(
        "{} imports \"{specifier}\", which resolves to {}, outside the plugin's own files ({})",
        from.display(),
        target.display(),
        own.join(", ")
    ))
}

/// Refuse `target` (what `specifier` in `from` resolved to) unless it is
/// one of the plugin's own paths.
pub(super) fn confine(
    own: &[PathBuf],
    from: &Path,
    specifier: &str,
    target: &Path,
) -> Result<(), GatherError> {
    if is_own(own, target) {
        Ok(())
    } else {
        Err(outside_own(own, from, specifier, target))
    }
}

/// Why the import of `specifier` in `file` refuses the plugin.
pub(super) fn refused_import(
    file: &Path,
    specifier: &str,
    builtins: &[Builtin],
    why: &PackageError,
) -> GatherError {
    let known: Vec<&str> = builtins.iter().map(|b| b.specifier).collect();
    GatherError::Refused(format!(
        "{} imports \"{specifier}\": {why} (a plugin may import its own files with ./, packages installed in its folder's node_modules, and the built-in modules: {})",
        file.display(),
        known.join(", ")
    ))
}
