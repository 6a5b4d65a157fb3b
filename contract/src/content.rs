//! Content blocks in yoagent's own JSON form, and a tool's output.

use serde::{Deserialize, Serialize};

/// One block of tool output: `{"type":"text","text":…}` or
/// `{"type":"image","data":<base64>,"mimeType":…}`, exactly as yoagent
/// serializes its `Content`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", deny_unknown_fields)]
pub enum ContentBlock {
    /// Plain text.
    #[serde(rename = "text")]
    Text {
        /// The text.
        text: String,
    },
    /// An image: base64 data and its MIME type.
    #[serde(rename = "image")]
    Image {
        /// Base64 (standard alphabet) of the image bytes.
        data: String,
        /// `image/png`, `image/jpeg`, `image/gif` or `image/webp`.
        #[serde(rename = "mimeType")]
        mime_type: String,
    },
}

impl ContentBlock {
    /// A text block.
    pub fn text(text: impl Into<String>) -> Self {
        Self::Text { text: text.into() }
    }
}

/// A tool call's output as `after_tool` sees it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolOutputData {
    /// What the model will see.
    pub content: Vec<ContentBlock>,
    /// Structured details for apps; not shown to the model.
    #[serde(default)]
    pub details: serde_json::Value,
    /// Whether the call failed.
    #[serde(default)]
    pub is_error: bool,
}
