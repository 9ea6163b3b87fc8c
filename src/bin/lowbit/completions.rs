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

#[derive(clap::Args)]
pub struct ManArgs {
    /// Write one page per command into this folder (lowbit.1, lowbit-cast.1,
    /// lowbit-checkpoint-quantize.1, ...) instead of the top page on standard output.
    #[arg(long, value_name = "DIR")]
    out: Option<std::path::PathBuf>,
}

/// Every page: the command's and each of its subcommands' (named `lowbit-cast` and so on, as
/// clap_mangen names them once the command is built), depth first.
fn pages(command: &clap::Command, out: &mut Vec<(String, Vec<u8>)>) -> std::io::Result<()> {
    for sub in command.get_subcommands().filter(|s| !s.is_hide_set()) {
        pages(sub, out)?;
    }
    let man = clap_mangen::Man::new(command.clone());
    let mut page = Vec::new();
    man.render(&mut page)?;
    out.push((man.get_filename(), page));
    Ok(())
}

pub fn man(args: ManArgs) -> crate::Outcome {
    let Some(dir) = args.out else {
        let mut out = Vec::new();
        clap_mangen::Man::new(crate::Cli::command()).render(&mut out).map_err(crate::output_failure)?;
        crate::write_stdout(&out)?;
        return Ok(std::process::ExitCode::SUCCESS);
    };
    let mut command = crate::Cli::command().disable_help_subcommand(true);
    command.build();
    let mut all = Vec::new();
    pages(&command, &mut all)
        .map_err(|e| lowbit::Error::Io { path: dir.display().to_string(), message: e.to_string() })?;
    std::fs::create_dir_all(&dir).map_err(|e| lowbit::Error::io(&dir, e))?;
    // Each page whole or not at all.
    for (name, page) in &all {
        lowbit::staging::write_file_atomically(&dir.join(name), |w| std::io::Write::write_all(w, page))?;
    }
    crate::printed(&format!("wrote {} manual pages to {}", all.len(), dir.display()))
}
