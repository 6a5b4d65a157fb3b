//! Error positions point into the TypeScript the author wrote, not the
//! JavaScript oxc made of it (whose lines differ once types are stripped):
//! - a throw while the plugin loads refuses it with the source's line;
//! - a throw in a tool's `execute`, through a real `yoagent::Agent`, is
//!   logged with the source's line.

use crate::support;

use serde_json::json;
use support::*;
use yohost::PluginHost;

/// Types spread over many lines before the code that throws: stripped,
/// the throw moves up; line 12 is the throw at load, line 21 in `execute`.
const AT_LOAD: &str = r#"import { definePlugin } from "yohost";
interface Options {
  a: string;
  b: number;
  c: boolean;
  d: string[];
}
type Alias = {
  x: Options;
};
const fail: boolean = true;
if (fail) throw new Error("boom at load");
export default definePlugin({});
"#;

const IN_EXECUTE: &str = r#"import { definePlugin } from "yohost";
interface Options {
  a: string;
  b: number;
  c: boolean;
  d: string[];
}
type Alias = {
  x: Options;
};
export default definePlugin({
  tools: [
    {
      name: "explode",
      description: "throws",
      parameters: { type: "object", properties: {} },
      execute: (_args: Record<string, never>): string => {
        const unused: Alias | undefined = undefined;
        void unused;
        const why: string = "boom in execute";
        throw new Error(why);
      },
    },
  ],
});
"#;

#[test]
fn a_throw_at_load_names_the_line_of_the_typescript_source() {
    let dir = plugin_dir();
    write(dir.path(), "boom.ts", AT_LOAD);
    let host = PluginHost::open(dir.path()).unwrap();
    let reason = host.refused()[0].reason.to_string();
    assert!(reason.contains("boom at load"), "{reason}");
    assert!(reason.contains("boom.ts:12"), "{reason}");
}

#[tokio::test(flavor = "current_thread")]
async fn a_throw_in_a_hook_is_logged_with_the_line_of_the_typescript_source() {
    let (logs, _guard) = capture_logs();
    let dir = plugin_dir();
    write(dir.path(), "explode.ts", IN_EXECUTE);
    let host = PluginHost::open(dir.path()).unwrap();
    assert!(host.refused().is_empty(), "{:?}", host.refused());
    let (agent, _) = scripted(vec![call("explode", json!({})), text("done")]);
    let mut agent = agent.with_extension(host.extension());
    let results = tool_results(&run(&mut agent, "go").await);
    assert!(results[0].2, "{results:?}");
    let logged = serde_json::to_string(&logs.lines()).unwrap();
    assert!(logged.contains("boom in execute"), "{logged}");
    assert!(logged.contains("explode.ts:21"), "{logged}");
}
