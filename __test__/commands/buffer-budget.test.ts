// The process-wide budget of buffered exec output (setBufferBudget / bufferBudget): its input
// checks. No engine call; the budget's effect on exec is proven in sandbox/hostile-output.
import { constants } from 'node:buffer';
import { describe, expect, test } from 'vitest';
import { bufferBudget, InvalidArgumentError, setBufferBudget } from '../../index.mjs';

describe('setBufferBudget', () => {
  test('takes whole bytes from 0 to a Buffer\'s maximum length; refuses past it, negatives, fractions and non-numbers', () => {
    const before = bufferBudget().budgetBytes;
    try {
      expect(setBufferBudget(constants.MAX_LENGTH)).toBe(before);
      expect(bufferBudget().budgetBytes).toBe(constants.MAX_LENGTH);
      expect(setBufferBudget(0)).toBe(constants.MAX_LENGTH);
      for (const bad of [constants.MAX_LENGTH + 1, -1, 1.5, Number.NaN, '10' as unknown as number]) {
        let error: unknown;
        try {
          setBufferBudget(bad);
        } catch (e) {
          error = e;
        }
        expect(InvalidArgumentError.isInstance(error)).toBe(true);
        expect((error as { details: { field: string } }).details.field).toBe('bytes');
      }
      expect(bufferBudget().budgetBytes).toBe(0);
    } finally {
      setBufferBudget(before);
    }
  });
});
