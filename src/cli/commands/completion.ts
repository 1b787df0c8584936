/**
 * `ctl completion <shell>`: prints the completion script of the whole program for bash, zsh or
 * fish (see ../completion.ts), to be saved or sourced as docs/cli.md shows.
 */
import { Argument, type Command } from 'commander'
import { COMPLETION_SHELLS, completionScript, type CompletionShell } from '../completion.js'
import type { Runtime } from '../runtime.js'

/** Registers `completion`. */
export function completionCommand(program: Command, runtime: Runtime): void {
  program
    .command('completion')
    .description('print the shell completion script (bash, zsh or fish)')
    .addArgument(new Argument('<shell>', 'the shell').choices(COMPLETION_SHELLS))
    .action((shell: CompletionShell) => {
      // The script ends with a newline of its own.
      runtime.output.out(completionScript(program, shell).trimEnd())
    })
}
