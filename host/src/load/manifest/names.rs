//! Plugin names: 1 to 64 characters, letters, digits and `-`, `_`, `.`,
//! `@`, `/`, `+` or `:` ([`check_name`]).

/// The longest plugin name, in characters.
pub const MAX_NAME_CHARS: usize = 64;

/// Why a plugin name is not valid. Each message says what a valid name is.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum NameError {
    /// The name is empty.
    #[error("it is empty; {RULE}")]
    Empty,
    /// The name is longer than [`MAX_NAME_CHARS`].
    #[error("it has {0} characters; {RULE}")]
    TooLong(usize),
    /// The name holds a character a name may not hold.
    #[error("it contains {0:?}; {RULE}")]
    BadChar(char),
    /// The file name is not valid UTF-8.
    #[error("the file name is not valid UTF-8; rename it")]
    NotUtf8,
}

const RULE: &str = "a plugin name is 1 to 64 characters: letters, digits, and - _ . @ / + :";

/// Check that `name` is a valid plugin name (see the module docs).
pub fn check_name(name: &str) -> Result<(), NameError> {
    if name.is_empty() {
        return Err(NameError::Empty);
    }
    let chars = name.chars().count();
    if chars > MAX_NAME_CHARS {
        return Err(NameError::TooLong(chars));
    }
    match name
        .chars()
        .find(|c| !(c.is_alphanumeric() || "-_.@/+:".contains(*c)))
    {
        Some(bad) => Err(NameError::BadChar(bad)),
        None => Ok(()),
    }
}
