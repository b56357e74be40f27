use clap::Parser;
use clap::error::ErrorKind;

fn main() {
    // Rust ignores SIGPIPE, which turns `volbench ... | head` into a panic
    // on the next print; behave like other command-line tools and end quietly.
    // SAFETY: restoring a signal's default disposition before any thread starts.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    let cli = match volbench::input::args::Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => bad_arguments(e),
    };
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

/// Clap's own errors (an unknown flag, a missing --target) become one line
/// with exit 2 like every other bad input, instead of a usage page; help and
/// --version print as usual.
fn bad_arguments(e: clap::Error) -> ! {
    match e.kind() {
        ErrorKind::DisplayHelp
        | ErrorKind::DisplayVersion
        | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => e.exit(),
        _ => {
            let text = e.render().to_string();
            // The message is the first paragraph; a tip and the usage follow.
            let message: Vec<&str> = text
                .lines()
                .map(str::trim)
                .skip_while(|l| l.is_empty())
                .take_while(|l| !l.is_empty())
                .collect();
            let message = message.join(" ");
            let message = message.strip_prefix("error: ").unwrap_or(&message);
            let line = volbench::units::bounds::one_line(message);
            eprintln!("volbench: error: {line} (see --help)");
            std::process::exit(volbench::error::exit::BAD_INPUT);
        }
    }
}
