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
            // One line whatever the message echoes back (a value with a
            // newline or an escape sequence in it): scripts read the last
            // line of stderr, and a terminal must not interpret it.
            let line = volbench::units::bounds::one_line(&e.to_string());
            eprintln!("volbench: error: {line}");
            e.exit_code()
        }
    };
    std::process::exit(code);
}
