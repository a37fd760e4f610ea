// Two more offline images for drift tests: `berth-test/busybox:other`, the same root filesystem
// under another image id (a different LABEL), and `berth-test/busybox:alias`, a second name for
// the test image itself (same id). Through the Engine API only, never a pull.
import { engineRequest } from './engine-http.mjs';
import { buildRootfsTar, TEST_IMAGE, TEST_IMAGE_REPO } from './test-image.mjs';

/** An image whose id differs from the test image's. */
export const OTHER_IMAGE = `${TEST_IMAGE_REPO}:other`;
/** Another reference to the test image (same image id). */
export const ALIAS_IMAGE = `${TEST_IMAGE_REPO}:alias`;

/**
 * Imports {@link OTHER_IMAGE} when absent (`POST /images/create?fromSrc=-`) and tags the test
 * image as {@link ALIAS_IMAGE} (`POST /images/{name}/tag`).
 * @param {{ socketPath?: string }} [options]
 */
export async function ensureDriftImages({ socketPath } = {}) {
  const other = await engineRequest('GET', `/images/${OTHER_IMAGE}/json`, { socketPath });
  if (other.status === 404) {
    const changes = ['CMD ["sh"]', 'LABEL berth.test-image.variant=other'].map((c) => `&changes=${encodeURIComponent(c)}`).join('');
    const res = await engineRequest('POST', `/images/create?fromSrc=-&repo=${encodeURIComponent(TEST_IMAGE_REPO)}&tag=other${changes}`, {
      body: await buildRootfsTar(),
      socketPath,
      headers: { 'Content-Type': 'application/x-tar' },
    });
    if (res.status !== 200 || /"error/.test(res.text)) throw new Error(`import ${OTHER_IMAGE}: HTTP ${res.status} ${res.text}`);
  } else if (other.status !== 200) {
    throw new Error(`inspect ${OTHER_IMAGE}: HTTP ${other.status}`);
  }
  const tag = await engineRequest('POST', `/images/${TEST_IMAGE}/tag?repo=${encodeURIComponent(TEST_IMAGE_REPO)}&tag=alias`, { socketPath });
  if (tag.status !== 201) throw new Error(`tag ${ALIAS_IMAGE}: HTTP ${tag.status} ${tag.text}`);
}
