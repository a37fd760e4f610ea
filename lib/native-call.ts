import { fromNative } from './errors/from-native';

/**
 * Runs a native call and turns its marked errors into berth errors (see {@link fromNative}),
 * whether it throws synchronously or rejects. Unmarked errors pass through unchanged.
 */
export async function callNative<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    throw fromNative(error);
  }
}

/** The synchronous twin of {@link callNative}. */
export function callNativeSync<T>(call: () => T): T {
  try {
    return call();
  } catch (error) {
    throw fromNative(error);
  }
}
