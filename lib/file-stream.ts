import type * as Native from '../binding';
import { callNative } from './native-call';
import { invalid } from './validate';
import { pullStream } from './exec-process';

/**
 * A container file's bytes as a web `ReadableStream`, read in 64 KiB chunks as the stream is
 * pulled (never the whole file in memory). Cancelling the stream drops the download; `onEnd`
 * runs once when it ended, failed or was cancelled.
 */
export function fileStream(reader: Native.BindingFileReader, onEnd?: () => void): ReadableStream<Uint8Array> {
  return pullStream((r) => r.read(), () => reader.cancel(), reader, onEnd);
}

/** Anything `Session.writeFileStream` accepts: a web stream or any (async) iterable of bytes. */
export type ByteSource = ReadableStream<Uint8Array> | AsyncIterable<Uint8Array> | Iterable<Uint8Array>;

/**
 * `value` must be a {@link ByteSource}: a web `ReadableStream` or an (async) iterable that is
 * not a string (a string iterates characters, not bytes; `writeFile` takes strings).
 *
 * @throws InvalidArgumentError `E_INVALID_ARGUMENT` naming `field`.
 */
export function expectByteSource(value: unknown, field: string): asserts value is ByteSource {
  const v = value as { [Symbol.asyncIterator]?: unknown; [Symbol.iterator]?: unknown } | null;
  const ok =
    v !== null &&
    typeof v === 'object' &&
    (isReadableStream(v) || typeof v[Symbol.asyncIterator] === 'function' || typeof v[Symbol.iterator] === 'function');
  if (!ok) {
    const got = value === null ? 'null' : Array.isArray(value) ? 'an array' : typeof value;
    invalid(field, `expected a ReadableStream or an iterable of Uint8Array chunks, got ${got}`);
  }
}

/**
 * Feeds `source` chunk by chunk into a native writer (which spools it to an unlinked host temp
 * file), then uploads it with `close()`. On any failure the spool is dropped and the source
 * cancelled.
 */
export async function pipeToWriter(
  source: ByteSource,
  writer: Native.BindingFileWriter,
  close: () => Promise<void>,
): Promise<void> {
  const iterable = isReadableStream(source) ? iterateStream(source) : source;
  try {
    for await (const chunk of iterable as AsyncIterable<Uint8Array>) {
      if (!(chunk instanceof Uint8Array)) invalid('source', `every chunk must be a Uint8Array, got ${describeChunk(chunk)}`);
      if (chunk.byteLength === 0) continue;
      await callNative(() => writer.write(Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength)));
    }
  } catch (error) {
    await writer.abort();
    throw error;
  }
  await close();
}

function describeChunk(chunk: unknown): string {
  if (chunk === null) return 'null';
  if (Array.isArray(chunk)) return 'an array';
  return typeof chunk === 'object' ? 'an object' : typeof chunk;
}

function isReadableStream(value: unknown): value is ReadableStream<Uint8Array> {
  return typeof (value as ReadableStream | undefined)?.getReader === 'function';
}

async function* iterateStream(stream: ReadableStream<Uint8Array>): AsyncGenerator<Uint8Array> {
  const reader = stream.getReader();
  let done = false;
  try {
    while (true) {
      const next = await reader.read();
      if (next.done) {
        done = true;
        return;
      }
      yield next.value;
    }
  } finally {
    if (!done) await reader.cancel().catch(() => {});
    reader.releaseLock();
  }
}
