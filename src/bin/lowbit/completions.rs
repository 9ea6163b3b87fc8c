//! `lowbit completions SHELL` and `lowbit man`: generated from the clap definitions, so they
//! cannot drift from the flags.

use clap::CommandFactory;

/// The shells completions are generated for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Shell {
    Bash,
    Zsh,
    Fish,
}

#[derive(clap::Args)]
pub struct CompletionsArgs {
    /// bash, zsh or fish.
    #[arg(value_enum)]
    shell: Shell,
}

pub fn completions(args: CompletionsArgs) -> crate::Outcome {
    let mut command = crate::Cli::command();
    let mut out = Vec::new();
    let shell = match args.shell {
        Shell::Bash => clap_complete::Shell::Bash,
        Shell::Zsh => clap_complete::Shell::Zsh,
        Shell::Fish => clap_complete::Shell::Fish,
    };
    clap_complete::generate(shell, &mut command, "lowbit", &mut out);
    crate::write_stdout(&out)?;
    Ok(std::process::ExitCode::SUCCESS)
}

pub fn man() -> crate::Outcome {
    let mut out = Vec::new();
    clap_mangen::Man::new(crate::Cli::command()).render(&mut out).map_err(crate::output_failure)?;
    crate::write_stdout(&out)?;
    Ok(std::process::ExitCode::SUCCESS)
}
