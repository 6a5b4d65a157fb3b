//! A dylib tool `keep` that appends `x` to the file `kept` in the data
//! folder the host told it (`yohost_sdk::data_dir`), and answers what the
//! file holds and where the folder is: `<text> <folder>`, or `no folder`.

use yohost_sdk::*;

#[derive(Default)]
struct Keeper;

#[plugin]
impl Plugin for Keeper {
    const NAME: &'static str = "keeper";

    fn tools(&self, _run: &RunInfo) -> Result<Vec<ToolSpec>, String> {
        Ok(vec![ToolSpec {
            name: "keep".into(),
            description: "Keep one more x in the data folder.".into(),
            parameters: json!({"type": "object", "properties": {}}),
            label: None,
            prepares_arguments: false,
        }])
    }

    fn call_tool(&self, _call: CallToolArgs) -> Result<ToolReply, String> {
        let Some(dir) = data_dir() else {
            return Ok(answer("no folder".into()));
        };
        let file = dir.join("kept");
        let before = std::fs::read_to_string(&file).unwrap_or_default();
        std::fs::write(&file, before + "x").map_err(|e| e.to_string())?;
        let kept = std::fs::read_to_string(&file).map_err(|e| e.to_string())?;
        Ok(answer(format!("{kept} {}", dir.display())))
    }
}

fn answer(text: String) -> ToolReply {
    ToolReply {
        content: vec![ContentBlock::text(text)],
        ..ToolReply::default()
    }
}

export_plugin!(Keeper);
