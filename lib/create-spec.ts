import { MOUNT_KEYS, type CreateSpec } from './types';
import {
  compact,
  expectOptions,
  expectOptionalBoolean,
  expectOptionalNumber,
  expectOptionalString,
  expectOptionalStringArray,
  expectOptionalStringRecord,
  expectPort,
  expectString,
  expectStringArray,
  invalid,
} from './validate';

/** A create spec as the native binding takes it: setup commands as argvs only. */
export type NativeCreateSpec = Omit<Partial<CreateSpec>, 'setupCommands'> & { setupCommands?: string[][] };

/**
 * Converts one setup command to an argv: a string runs under `sh -c` (the caller chose a
 * shell; berth itself never builds shell strings), an array is used as is.
 */
export function setupArgv(command: unknown, field: string): string[] {
  if (typeof command === 'string') return ['sh', '-c', command];
  if (!Array.isArray(command)) invalid(field, 'expected a string or an array of strings');
  expectStringArray(command, field, 1);
  return [...command];
}

/**
 * Type-checks the create-spec fields present in `spec` and returns them in native form,
 * without `undefined` members. Used for createSession (all required fields present) and for
 * a resume `spec` (any subset). Value rules are left to the native core.
 *
 * @param spec The caller's fields.
 * @param path Prefix for field names in errors (`''` or `'spec.'`).
 * @throws InvalidArgumentError `E_INVALID_ARGUMENT` naming the first bad field.
 */
export function toNativeSpec(spec: Partial<CreateSpec>, path = ''): NativeCreateSpec {
  const f = (name: string): string => `${path}${name}`;
  expectOptionalString(spec.sessionId, f('sessionId'), { wellFormed: false });
  expectOptionalString(spec.image, f('image'));
  expectOptionalString(spec.prefix, f('prefix'), { wellFormed: false });
  expectOptionalString(spec.workDir, f('workDir'));
  expectOptionalString(spec.user, f('user'));
  expectOptionalString(spec.networkMode, f('networkMode'));
  expectOptionalStringRecord(spec.env, f('env'));
  expectOptionalStringRecord(spec.labels, f('labels'));
  expectOptionalStringArray(spec.entrypoint, f('entrypoint'));
  expectOptionalStringArray(spec.capDrop, f('capDrop'));
  expectOptionalStringArray(spec.mountRoots, f('mountRoots'));
  expectOptionalStringArray(spec.writablePaths, f('writablePaths'));
  expectOptionalBoolean(spec.noNewPrivileges, f('noNewPrivileges'));
  expectOptionalBoolean(spec.allowHostEscape, f('allowHostEscape'));
  expectOptionalBoolean(spec.localNetwork, f('localNetwork'));
  expectOptionalBoolean(spec.readOnlyRootFilesystem, f('readOnlyRootFilesystem'));
  // Numbers here; their ranges and messages are the core's (`CreateSpec::validate`, `pids_limit`).
  expectOptionalNumber(spec.memoryBytes, f('memoryBytes'));
  expectOptionalNumber(spec.cpus, f('cpus'), { integer: false });
  expectOptionalNumber(spec.pidsLimit, f('pidsLimit'), { integer: false });
  return compact({
    ...spec,
    ports: spec.ports === undefined ? undefined : ports(spec.ports, f('ports')),
    mounts: spec.mounts === undefined ? undefined : mounts(spec.mounts, f('mounts')),
    setupCommands: spec.setupCommands === undefined ? undefined : setupCommands(spec.setupCommands, f('setupCommands')),
  });
}

function list(value: unknown, field: string): unknown[] {
  if (!Array.isArray(value)) invalid(field, 'expected an array');
  return value;
}

function ports(value: unknown, field: string): number[] {
  return list(value, field).map((port, i) => {
    expectPort(port, `${field}[${i}]`);
    return port;
  });
}

function mounts(value: unknown, field: string): { source: string; target: string; readOnly?: boolean }[] {
  return list(value, field).map((mount, i) => {
    expectOptions(mount, `${field}[${i}]`, MOUNT_KEYS, `${field}[${i}].`);
    expectString(mount.source, `${field}[${i}].source`);
    expectString(mount.target, `${field}[${i}].target`);
    expectOptionalBoolean(mount.readOnly, `${field}[${i}].readOnly`);
    return compact({ source: mount.source, target: mount.target, readOnly: mount.readOnly });
  });
}

function setupCommands(value: unknown, field: string): string[][] {
  return list(value, field).map((command, i) => setupArgv(command, `${field}[${i}]`));
}
