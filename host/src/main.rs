//! The `yohost` command: check a plugin directory, or run an agent with it.

mod cli;

fn main() -> std::process::ExitCode {
    cli::main()
}
