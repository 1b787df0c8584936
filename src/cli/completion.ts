/**
 * Shell completion scripts for a commander program (bash, zsh, fish), generated from the
 * program's own commands, aliases, options and argument choices when they are asked for, so
 * they cannot drift from what the program accepts.
 *
 * Every script works the same way: it walks the words typed so far, following command names
 * and aliases from the root (`ctl` → `ctl rl` → `ctl rl set`; option words are skipped), and
 * offers what that command takes: its subcommands, its options and those of its ancestors
 * (`--json` anywhere), the choices of its arguments. After an option that takes a value it
 * offers file names when it is a file option (`--file`, `--output`, a `<file>` value), else
 * nothing.
 */
import type { Command } from 'commander'

/** The shells a completion script can be generated for. */
export const COMPLETION_SHELLS = ['bash', 'zsh', 'fish'] as const

/** One of {@link COMPLETION_SHELLS}. */
export type CompletionShell = (typeof COMPLETION_SHELLS)[number]

/** A word to offer: a command name, an alias, an option flag or an argument choice. */
interface Candidate {
  word: string
  description: string
}

/** An option that takes a value: what to offer after it. */
interface ValueOption {
  flags: string[]
  files: boolean
}

/** What one command offers, under its path of canonical names (`ctl rl set`). */
interface CompletionNode {
  path: string
  /** Subcommand names and aliases, each with the canonical path it leads to. */
  children: { word: string; path: string; description: string }[]
  options: Candidate[]
  choices: Candidate[]
  valueOptions: ValueOption[]
}

/** The completion script of `program` for `shell`. */
export function completionScript(program: Command, shell: CompletionShell): string {
  const nodes = completionTree(program)
  const name = program.name()
  switch (shell) {
    case 'bash':
      return bashScript(name, nodes)
    case 'zsh':
      return zshScript(name, nodes)
    case 'fish':
      return fishScript(name, nodes)
  }
}

/** Every command of `program` (the root first), with what it offers. */
function completionTree(program: Command): CompletionNode[] {
  const nodes: CompletionNode[] = []
  const visit = (
    command: Command,
    path: string,
    inherited: Candidate[],
    inheritedValues: ValueOption[],
  ): void => {
    const help = command.createHelp()
    const options = help.visibleOptions(command).filter((option) => !option.hidden)
    const own: Candidate[] = options.flatMap((option) =>
      [option.short, option.long]
        .filter((flag): flag is string => flag !== undefined)
        .map((word) => ({ word, description: option.description })),
    )
    const children = help.visibleCommands(command)
    const values: ValueOption[] = options
      .filter((option) => option.required || option.optional)
      .map((option) => ({
        flags: [option.short, option.long].filter((flag): flag is string => flag !== undefined),
        // `<path>` also names URL paths (`--exempt <path>`): the option's name says "file".
        files: /^--(?:file|output)$/.test(option.long ?? '') || /<file>/.test(option.flags),
      }))
    nodes.push({
      path,
      children: children.flatMap((child) =>
        [child.name(), ...child.aliases()].map((word) => ({
          word,
          path: `${path} ${child.name()}`,
          description: child.description(),
        })),
      ),
      options: [...own, ...inherited.filter((option) => !own.some((o) => o.word === option.word))],
      choices: command.registeredArguments.flatMap((argument) =>
        (argument.argChoices ?? []).map((word) => ({ word, description: argument.description })),
      ),
      valueOptions: [...values, ...inheritedValues],
    })
    // Options of a parent are accepted after its subcommands; its help and version are not.
    const passed = own.filter((option) => !/^(-h|--help|-V|--version)$/.test(option.word))
    const passedValues = values.filter((value) =>
      value.flags.some((flag) => passed.some((o) => o.word === flag)),
    )
    for (const child of children) {
      visit(
        child,
        `${path} ${child.name()}`,
        [...passed, ...inherited],
        [...passedValues, ...inheritedValues],
      )
    }
  }
  visit(program, program.name(), [], [])
  return nodes
}

/** A word in single quotes for bash and zsh. */
function shQuote(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`
}

/** A word in single quotes for fish. */
function fishQuote(text: string): string {
  return `'${text.replace(/[\\']/g, (char) => `\\${char}`)}'`
}

/** A shell function name part for the program (`ctl` → `ctl`, `my-cli` → `my_cli`). */
function identifier(name: string): string {
  return name.replace(/[^\w]/g, '_')
}

/** The `case` arms (bash and zsh) that map `<path> <word>` to the path a command word leads to. */
function childArms(nodes: CompletionNode[]): string[] {
  return nodes.flatMap((node) =>
    node.children.map(
      (child) => `    ${shQuote(`${node.path} ${child.word}`)}) REPLY=${shQuote(child.path)} ;;`,
    ),
  )
}

/** The `case` arms (bash and zsh) for the word after an option that takes a value. */
function valueArms(nodes: CompletionNode[], files: string): string[] {
  return nodes.flatMap((node) =>
    node.valueOptions.map(
      (option) =>
        `    ${option.flags.map((flag) => shQuote(`${node.path}|${flag}`)).join('|')}) ${option.files ? files : 'return 0'} ;;`,
    ),
  )
}

function bashScript(name: string, nodes: CompletionNode[]): string {
  const id = identifier(name)
  return [
    `# bash completion of ${name}, generated by \`${name} completion bash\` from its commands.`,
    `# Install: ${name} completion bash > /etc/bash_completion.d/${name}`,
    `# (or, for this shell only: source <(${name} completion bash))`,
    '',
    `_${id}_child() {`,
    '  case "$1 $2" in',
    ...childArms(nodes),
    "    *) REPLY='' ;;",
    '  esac',
    '}',
    '',
    `_${id}() {`,
    '  local cur="${COMP_WORDS[COMP_CWORD]}" prev="${COMP_WORDS[COMP_CWORD - 1]}"',
    `  local at=${shQuote(name)} word i REPLY words`,
    '  for ((i = 1; i < COMP_CWORD; i++)); do',
    '    word="${COMP_WORDS[i]}"',
    '    [[ "$word" == -* ]] && continue',
    `    _${id}_child "$at" "$word"`,
    '    [[ -n "$REPLY" ]] && at="$REPLY"',
    '  done',
    '  COMPREPLY=()',
    '  case "$at|$prev" in',
    ...valueArms(nodes, 'COMPREPLY=($(compgen -f -- "$cur")); return 0'),
    '  esac',
    '  case "$at" in',
    ...nodes.map(
      (node) =>
        `    ${shQuote(node.path)}) words=${shQuote(
          [...node.children, ...node.choices, ...node.options].map((c) => c.word).join(' '),
        )} ;;`,
    ),
    '  esac',
    '  COMPREPLY=($(compgen -W "$words" -- "$cur"))',
    '}',
    '',
    `complete -F _${id} ${name}`,
    '',
  ].join('\n')
}

/** A `name:description` entry of zsh's `_describe`. */
function zshEntry(candidate: Candidate): string {
  return shQuote(`${candidate.word.replace(/:/g, '\\:')}:${candidate.description}`)
}

function zshScript(name: string, nodes: CompletionNode[]): string {
  const id = identifier(name)
  return [
    `#compdef ${name}`,
    `# zsh completion of ${name}, generated by \`${name} completion zsh\` from its commands.`,
    `# Install: source <(${name} completion zsh) in ~/.zshrc, after compinit`,
    `# (or save it as _${name} in a directory of $fpath).`,
    '',
    `_${id}_child() {`,
    '  case "$1 $2" in',
    ...childArms(nodes),
    "    *) REPLY='' ;;",
    '  esac',
    '}',
    '',
    `_${id}() {`,
    // `words` and `CURRENT` are zsh's: the command line and the index of the word completed.
    `  local at=${shQuote(name)} word i REPLY`,
    '  local -a subcommands flags',
    '  for ((i = 2; i < CURRENT; i++)); do',
    '    word="${words[i]}"',
    '    [[ "$word" == -* ]] && continue',
    `    _${id}_child "$at" "$word"`,
    '    [[ -n "$REPLY" ]] && at="$REPLY"',
    '  done',
    '  case "$at|${words[CURRENT - 1]}" in',
    ...valueArms(nodes, '_files; return 0'),
    '  esac',
    '  case "$at" in',
    ...nodes.map((node) =>
      [
        `    ${shQuote(node.path)})`,
        `      subcommands=(${[...node.children, ...node.choices].map(zshEntry).join(' ')})`,
        `      flags=(${node.options.map(zshEntry).join(' ')}) ;;`,
      ].join('\n'),
    ),
    '  esac',
    "  _describe -t commands 'command' subcommands",
    "  _describe -t options 'option' flags",
    '}',
    '',
    `if [[ "\${funcstack[1]}" == _${id} ]]; then`,
    `  _${id} "$@"`,
    'else',
    `  compdef _${id} ${name}`,
    'fi',
    '',
  ].join('\n')
}

function fishScript(name: string, nodes: CompletionNode[]): string {
  const id = identifier(name)
  const at = (node: CompletionNode) => `-n ${fishQuote(`__${id}_at ${fishQuote(node.path)}`)}`
  return [
    `# fish completion of ${name}, generated by \`${name} completion fish\` from its commands.`,
    `# Install: ${name} completion fish > ~/.config/fish/completions/${name}.fish`,
    '',
    `function __${id}_child`,
    '    switch "$argv[1] $argv[2]"',
    ...nodes.flatMap((node) =>
      node.children.flatMap((child) => [
        `        case ${fishQuote(`${node.path} ${child.word}`)}`,
        `            echo ${fishQuote(child.path)}`,
      ]),
    ),
    '    end',
    'end',
    '',
    // True when the words typed so far lead to the command `$argv[1]`.
    `function __${id}_at`,
    '    set -l tokens (commandline -opc)',
    '    set -e tokens[1]',
    `    set -l at ${fishQuote(name)}`,
    '    for word in $tokens',
    "        string match -q -- '-*' $word; and continue",
    `        set -l next (__${id}_child $at $word)`,
    '        test -n "$next"; and set at $next',
    '    end',
    '    test "$at" = "$argv[1]"',
    'end',
    '',
    `complete -c ${name} -f`,
    ...nodes.flatMap((node) => [
      ...[...node.children, ...node.choices].map(
        (candidate) =>
          `complete -c ${name} ${at(node)} -a ${fishQuote(candidate.word)} -d ${fishQuote(candidate.description)}`,
      ),
      ...node.options.map((option) => {
        const value = node.valueOptions.find((v) => v.flags.includes(option.word))
        const flag = option.word.startsWith('--')
          ? `-l ${fishQuote(option.word.slice(2))}`
          : `-s ${fishQuote(option.word.slice(1))}`
        const takes = value === undefined ? '' : value.files ? ' -r -F' : ' -x'
        return `complete -c ${name} ${at(node)} ${flag}${takes} -d ${fishQuote(option.description)}`
      }),
    ]),
    '',
  ].join('\n')
}
