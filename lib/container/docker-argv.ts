// The docker CLI argv the old `container.ts` would have run for each step, for the `args` field
// of errors (callers of the old module log or match it). Env values are never included.

/** What replaces an env value in `args`. */
export const REDACTED = '<redacted>';

/** The create spec fields the argv of `run` shows. */
export interface RunArgvSpec {
  image: string;
  workDir?: string | undefined;
  ports?: readonly number[] | undefined;
  env?: Readonly<Record<string, string>> | undefined;
  user?: string | undefined;
}

/** `run -d --name <name> --init [-p 127.0.0.1::<port>]... [-e KEY=<redacted>]... [-w dir] [-u user] <image> sleep infinity`. */
export function runArgv(name: string, spec: RunArgvSpec): string[] {
  return [
    'run',
    '-d',
    '--name',
    name,
    '--init',
    ...(spec.ports ?? []).flatMap((port) => ['-p', `127.0.0.1::${port}`]),
    ...Object.keys(spec.env ?? {}).flatMap((key) => ['-e', `${key}=${REDACTED}`]),
    ...(spec.workDir === undefined ? [] : ['-w', spec.workDir]),
    ...(spec.user === undefined ? [] : ['-u', spec.user]),
    spec.image,
    'sleep',
    'infinity',
  ];
}

/** `start <name>`: adopting a container that holds the name. */
export function startArgv(name: string): string[] {
  return ['start', name];
}

/** `rm -f <id>`: berth removes by id, never by name. */
export function removeArgv(idOrName: string): string[] {
  return ['rm', '-f', idOrName];
}

/** `port <name> <port>/tcp`. */
export function portArgv(name: string, port: number): string[] {
  return ['port', name, `${port}/tcp`];
}

/** `inspect <name>`. */
export function inspectArgv(name: string): string[] {
  return ['inspect', name];
}
