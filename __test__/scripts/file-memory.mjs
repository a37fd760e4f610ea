// Run by files.test.ts in its own process (with --expose-gc): streams BERTH_MEMORY_MIB MiB into a
// fresh session and back out, sampling process.memoryUsage() on every chunk, and prints one JSON
// line. The source reuses one chunk buffer and a gc() runs every 8 MiB, so what is measured is
// what berth holds, not garbage the collector has not reached yet:
// { writtenSha, readSha, readSize, containerSize, peakRssGrowth, peakArrayBuffersGrowth }.
import { createHash } from 'node:crypto';
import { createSession } from '../../index.mjs';

const CHUNK_BYTES = 256 * 1024;
const GC_EVERY_CHUNKS = 32;
const total = Number(process.env.BERTH_MEMORY_MIB) * 1024 * 1024;
const session = await createSession({
  sessionId: process.env.BERTH_MEMORY_SESSION ?? '',
  image: 'berth-test/busybox:1',
  labels: JSON.parse(process.env.BERTH_MEMORY_LABELS ?? '{}'),
});
try {
  // Warm up the native paths once, then take the baseline.
  await session.writeFile('/tmp/warm', 'x');
  await session.readFile('/tmp/warm');
  globalThis.gc?.();
  const base = process.memoryUsage();
  let peakRss = base.rss;
  let peakArrayBuffers = base.arrayBuffers;
  const sample = () => {
    const m = process.memoryUsage();
    peakRss = Math.max(peakRss, m.rss);
    peakArrayBuffers = Math.max(peakArrayBuffers, m.arrayBuffers);
  };

  const written = createHash('sha256');
  const buffer = Buffer.alloc(CHUNK_BYTES);
  async function* source() {
    // Deterministic content made chunk by chunk in one reused buffer (berth copies each chunk
    // before its write() resolves); never the whole file.
    for (let offset = 0, n = 0; offset < total; offset += CHUNK_BYTES, n++) {
      const pattern = createHash('sha512').update(String(n)).digest();
      const block = buffer.subarray(0, Math.min(CHUNK_BYTES, total - offset));
      for (let i = 0; i < block.length; i += pattern.length) pattern.copy(block, i);
      written.update(block);
      if (n % GC_EVERY_CHUNKS === 0) globalThis.gc?.();
      sample();
      yield block;
    }
  }
  await session.writeFileStream('/tmp/big.bin', source());
  globalThis.gc?.();
  sample();

  const read = createHash('sha256');
  let readSize = 0;
  let chunks = 0;
  const stream = await session.openFile('/tmp/big.bin');
  if (!stream) throw new Error('/tmp/big.bin is missing');
  for await (const chunk of stream) {
    read.update(chunk);
    readSize += chunk.byteLength;
    if (++chunks % (GC_EVERY_CHUNKS * 4) === 0) globalThis.gc?.();
    sample();
  }
  const wc = await session.exec(['wc', '-c', '/tmp/big.bin']);
  console.log(
    JSON.stringify({
      writtenSha: written.digest('hex'),
      readSha: read.digest('hex'),
      readSize,
      containerSize: Number(wc.stdout.toString().trim().split(/\s+/)[0]),
      peakRssGrowth: peakRss - base.rss,
      peakArrayBuffersGrowth: peakArrayBuffers - base.arrayBuffers,
    }),
  );
} finally {
  await session.remove();
}
