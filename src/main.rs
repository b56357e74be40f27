use clap::error::ErrorKind;

fn main() {
    // SIGPIPE stays ignored (Rust's runtime ignores it): a reader that goes
    // away is a write error that `volbench::console` handles (the results
    // are written first), never a death that loses them.
    // At most 6 words: more is never the agent's plain command line (5
    // with `--task-env VAR`; a sixth shows a longer line is not it).
    let first: Vec<std::ffi::OsString> = std::env::args_os().skip(1).take(6).collect();
    let outcome = match volbench::cmd::agent_fast_path(&first) {
        Some(outcome) => outcome,
        None => match volbench::input::args::help::parse() {
            Ok(cli) => volbench::cmd::main(cli),
            Err(e) => bad_arguments(e),
        },
    };
    let code = match outcome {
        Ok(code) => code,
        Err(e) => {
            // Each line of the message made safe (a value with an escape
            // sequence in it must not reach the terminal); a message of
            // several lines (one per cause on many hosts) keeps them.
            let text = e.to_string();
            // Only indented detail lines (a cause and its hosts) stand on
            // their own; any other newline is the input's and is escaped.
            let detail = text.lines().skip(1).all(|l| l.starts_with("  "));
            let lines: Vec<String> = if detail {
                text.lines()
                    .map(volbench::units::bounds::one_line)
                    .collect()
            } else {
                vec![volbench::units::bounds::one_line(&text)]
            };
            let mut lines = lines.into_iter();
            volbench::console::write_err_line(format_args!(
                "volbench: error: {}",
                lines.next().unwrap_or_default()
            ));
            for line in lines {
                volbench::console::write_err_line(format_args!("{line}"));
            }
            e.exit_code()
        }
    };
    std::process::exit(volbench::console::finish(code));
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
            let hint = volbench::units::bounds::one_line(&hints(&e));
            volbench::console::write_err_line(format_args!(
                "volbench: error: {line}{hint} (see --help)"
            ));
            std::process::exit(volbench::error::exit::BAD_INPUT);
        }
    }
}

/// What follows the message: clap's own "did you mean" (cut with the rest
/// of its page above), and, for a name fio, vdbench or diskspd use, what
/// volbench calls it.
fn hints(e: &clap::Error) -> String {
    use clap::error::{ContextKind, ContextValue};
    let text = |kind| match e.get(kind) {
        Some(ContextValue::String(s)) => vec![s.clone()],
        Some(ContextValue::Strings(v)) => v.clone(),
        _ => Vec::new(),
    };
    let mut out = String::new();
    let suggested: Vec<String> = [ContextKind::SuggestedArg, ContextKind::SuggestedSubcommand]
        .into_iter()
        .flat_map(text)
        .collect();
    let value = text(ContextKind::InvalidValue).into_iter().next();
    // Another tool's name wins over clap's guess by spelling (--rwmixread
    // is fio's --read-pct, not a misspelt --rw).
    let argv: Vec<String> = std::env::args_os()
        .skip(1)
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let within = volbench::input::foreign_flags::front_end(&argv);
    let hint = text(ContextKind::InvalidArg)
        .first()
        .and_then(|arg| volbench::input::foreign_flags::hint(arg, value.as_deref(), within));
    if let Some(h) = hint {
        out.push_str(&format!("; {h}"));
    } else if !suggested.is_empty() {
        out.push_str(&format!("; did you mean {}?", suggested.join(" or ")));
    }
    out
}
