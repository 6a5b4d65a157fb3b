//! Conversions between yoagent's types and the contract's.

use crate::model::limits::check_image;
use yoagent::extension::{RunContext, RunEnd, RunOutcome};
use yoagent::{Content, Message, ToolResult};
use yohost_contract::{ContentBlock, FinishArgs, RunInfo, ToolOutputData};

/// The contract's view of a run.
pub fn run_info(run: &RunContext<'_>) -> RunInfo {
    RunInfo {
        run_id: run.run_id.to_string(),
        label: run.label.map(String::from),
        depth: run.depth,
        parent_run_id: run.parent_run_id.map(String::from),
        delegated_by: run.delegated_by.map(String::from),
    }
}

/// yoagent content as contract blocks. Images outside the limits, and blocks
/// a tool result cannot hold, are replaced by a text note so a plugin never
/// receives what the contract does not allow.
pub fn blocks_from_content(content: &[Content]) -> Vec<ContentBlock> {
    content
        .iter()
        .map(|c| match c {
            Content::Text { text } => ContentBlock::text(text.clone()),
            Content::Image { data, mime_type } => match check_image(data, mime_type) {
                Ok(()) => ContentBlock::Image {
                    data: data.clone(),
                    mime_type: mime_type.clone(),
                },
                Err(why) => ContentBlock::text(format!("[image withheld from plugins: {why}]")),
            },
            _ => ContentBlock::text("[non-text content omitted]"),
        })
        .collect()
}

/// Contract blocks as yoagent content.
pub fn content_from_blocks(blocks: Vec<ContentBlock>) -> Vec<Content> {
    blocks
        .into_iter()
        .map(|b| match b {
            ContentBlock::Text { text } => Content::Text { text },
            ContentBlock::Image { data, mime_type } => Content::Image { data, mime_type },
        })
        .collect()
}

/// A yoagent tool result as the contract's output.
pub fn output_data(result: &ToolResult, is_error: bool) -> ToolOutputData {
    ToolOutputData {
        content: blocks_from_content(&result.content),
        details: result.details.clone(),
        is_error,
    }
}

/// The text of a message's text blocks, joined by newlines.
pub fn message_text(message: &Message) -> String {
    let content = match message {
        Message::User { content, .. } | Message::Assistant { content, .. } => content,
        Message::ToolResult { content, .. } => content,
    };
    content_text(content)
}

/// The text blocks of `content`, joined by newlines.
pub fn content_text(content: &[Content]) -> String {
    content
        .iter()
        .filter_map(|c| match c {
            Content::Text { text } => Some(text.as_str()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// `finish`'s argument for a run's outcome.
pub fn finish_args(run: RunInfo, outcome: &RunOutcome) -> FinishArgs {
    let (end, reason, error) = match outcome.end() {
        RunEnd::Completed => ("completed", None, None),
        RunEnd::Stopped { reason } => ("stopped", Some(reason.clone()), None),
        RunEnd::Rejected { reason } => ("rejected", Some(reason.clone()), None),
        RunEnd::Cancelled => ("cancelled", None, None),
        RunEnd::Failed { error, .. } => ("failed", None, Some(error.clone())),
        _ => ("ended", None, None),
    };
    FinishArgs {
        run,
        end: end.into(),
        reason,
        error,
    }
}
