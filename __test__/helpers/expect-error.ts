import { expect } from 'vitest';
import { BerthError } from '../../index.mjs';

/** A berth error subclass as the package root exports it. */
export interface BerthErrorClass<E extends BerthError> {
  new (message: string, options?: never): E;
  readonly CODE: string;
  isInstance(error: unknown): boolean;
}

/** The reason `promise` rejects with; fails the test when it resolves. */
export async function rejectionOf(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    (value) => expect.fail(`expected a rejection, got ${String(value)}`),
    (error: unknown) => error,
  );
}

/**
 * Asserts that `promise` rejects with an instance of `Class` (by `instanceof` of the class the
 * package root exports, and by `isInstance`), carrying `Class.CODE` and a `details` object.
 * Returns the error, typed.
 */
export async function expectBerthError<E extends BerthError>(
  promise: Promise<unknown>,
  Class: BerthErrorClass<E>,
): Promise<E> {
  const error = await rejectionOf(promise);
  if (!(error instanceof Class)) {
    expect.fail(`expected ${Class.name} (${Class.CODE}), got ${(error as Error)?.name}: ${(error as Error)?.message}`);
  }
  expect(Class.isInstance(error)).toBe(true);
  expect(BerthError.isInstance(error)).toBe(true);
  expect(error).toBeInstanceOf(Error);
  expect(error.code).toBe(Class.CODE);
  expect(error.details).toBeTypeOf('object');
  return error as E;
}
