use clap::Parser;

fn main() {
    let cli = volbench::cli::Cli::parse();
    let code = match volbench::app::main(cli) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("volbench: error: {e}");
            e.exit_code()
        }
    };
    std::process::exit(code);
}
