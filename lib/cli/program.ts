import { Command, Option } from 'commander';
import { registerEngine } from './commands/engine';
import { registerLs } from './commands/ls';
import { registerPeek } from './commands/peek';
import { registerReap } from './commands/reap';
import { registerRm } from './commands/rm';
import { registerTemplates } from './commands/templates';
import { registerTop } from './commands/top';

/** The package's version, from its package.json (two levels above `dist/cli/`). */
function packageVersion(): string {
  return (require('../../package.json') as { version: string }).version;
}

/**
 * The `berth` command: global options, every command, and commander set up so that a usage
 * error throws (the caller maps it to exit 2) after printing the error and the command's help.
 */
export function buildProgram(): Command {
  const program = new Command('berth')
    .description('look after berth sandbox sessions: list, inspect, usage figures, remove, reap orphans, templates, engine')
    .version(packageVersion(), '-V, --version', 'print the version')
    .addOption(new Option('--engine <name>', 'the engine to use').choices(['docker', 'podman']))
    .option('--socket <path>', 'the engine endpoint: a unix socket path, unix:// or tcp:// URL (wins over everything)')
    .option('--json', 'machine output: one JSON document on stdout')
    .option('--no-color', 'no colours (also when NO_COLOR is set, or stdout is not a terminal)')
    .helpOption('-h, --help', 'show help')
    .helpCommand('help [command]', 'show help for a command')
    .showHelpAfterError()
    .exitOverride()
    .addHelpText(
      'after',
      '\nExit codes: 0 success, 1 a berth error (its code printed, e.g. E_ENGINE_UNAVAILABLE), 2 bad usage.\n' +
        'Engine: --socket, else --engine, else DOCKER_HOST / CONTAINER_HOST, the Docker context, the usual sockets.',
    );
  registerLs(program);
  registerPeek(program);
  registerTop(program);
  registerRm(program);
  registerReap(program);
  registerTemplates(program);
  registerEngine(program);
  return program;
}
