use clap::Parser;

fn main() {
    // Rust ignores SIGPIPE, which turns `volbench ... | head` into a panic
    // on the next print; behave like other command-line tools and end quietly.
    // SAFETY: restoring a signal's default disposition before any thread starts.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    let cli = volbench::input::cli::Cli::parse();
    let code = match volbench::cmd::main(cli) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("volbench: error: {e}");
            e.exit_code()
        }
    };
    std::process::exit(code);
}
